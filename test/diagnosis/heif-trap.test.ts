import { describe, expect, it, vi } from "vitest";
import { ImageError } from "../../src/diagnosis/diagnoser.js";
import { decodeHeif } from "../../src/diagnosis/image/heif.js";
import { SKIP_HEIC } from "../api/support/images.js";
import { leafJpeg, toHeic } from "./fixtures.js";

// No file is known to make this libheif build trap, so the trap is made here: every instance the factory creates
// is the real one, but the first one's decode call traps as WebAssembly does (an abort or out-of-bounds access).
const instances = vi.hoisted(() => ({ created: 0 }));
vi.mock("libheif-js/libheif-wasm/libheif-bundle.js", async (importOriginal) => {
  const { default: create } =
    await importOriginal<typeof import("libheif-js/libheif-wasm/libheif-bundle.js")>();
  return {
    default: (options?: Parameters<typeof create>[0]) => {
      const lib = create(options);
      if (++instances.created === 1) {
        lib._heif_decode_image = () => {
          // WebAssembly.RuntimeError, which this project's TypeScript libraries do not declare.
          throw Object.assign(new Error("unreachable"), { name: "RuntimeError" });
        };
      }
      return lib;
    },
  };
});

describe.skipIf(SKIP_HEIC)("a HEIC that makes the WebAssembly decoder trap", () => {
  it("is refused as corrupt, and HEICs after it, also one already waiting, are decoded by a new instance", async () => {
    const photo = await toHeic(await leafJpeg(320, 240));
    // Both wait for the first instance; the first to run traps in it, the other must not use it.
    const [trapped, waiting] = await Promise.allSettled([decodeHeif(photo), decodeHeif(photo)]);
    expect(trapped.status).toBe("rejected");
    const error = (trapped as PromiseRejectedResult).reason as unknown;
    expect(error).toBeInstanceOf(ImageError);
    expect((error as ImageError).code).toBe("corrupt");
    expect(((error as ImageError).cause as Error).message).toMatch(/^libheif trapped: unreachable/);
    expect(waiting.status).toBe("fulfilled");
    const image = await decodeHeif(photo);
    expect([image.width, image.height]).toEqual([320, 240]);
    expect(instances.created).toBe(2);
  });
});
