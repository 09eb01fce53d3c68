import { describe, expect, it } from "vitest";
import { HEADING, replaceSection } from "../../models/eval/report.js";

describe("model card section written by npm run eval -- --write", () => {
  const card =
    "# Model\n\nML text.\n\n## Served-path evaluation (npm run eval)\n\nIntro by the ML side.\n\n## Licences\n\nCC0\n";

  it("adds the markers under the heading, keeping everything else", () => {
    const written = replaceSection(card, "TABLES v1");
    expect(written).toContain(
      "## Served-path evaluation (npm run eval)\n\n<!-- eval:start -->\nTABLES v1\n<!-- eval:end -->",
    );
    expect(written).toContain("Intro by the ML side.");
    expect(written).toContain("## Licences\n\nCC0");
  });

  it("replaces only what lies between the markers on the next run", () => {
    const twice = replaceSection(replaceSection(card, "TABLES v1"), "TABLES v2");
    expect(twice).not.toContain("TABLES v1");
    expect(twice.match(/eval:start/g)).toHaveLength(1);
    expect(twice).toContain("Intro by the ML side.");
  });

  it("appends the heading when the card has none", () => {
    expect(replaceSection("# Model\n", "T")).toBe(
      `# Model\n\n${HEADING}\n\n<!-- eval:start -->\nT\n<!-- eval:end -->\n`,
    );
  });
});
