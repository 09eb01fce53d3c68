// heic-decode ships no type declarations; this covers the part of its API the core uses.
declare module "heic-decode" {
  interface DecodedHeif {
    width: number;
    height: number;
    /** RGBA, 4 bytes per pixel. */
    data: Uint8ClampedArray;
  }
  interface HeifImageHandle {
    width: number;
    height: number;
    decode(): Promise<DecodedHeif>;
  }
  interface HeifImageList extends Array<HeifImageHandle> {
    dispose(): void;
  }
  function decode(input: { buffer: Uint8Array }): Promise<DecodedHeif>;
  namespace decode {
    function all(input: { buffer: Uint8Array }): Promise<HeifImageList>;
  }
  export default decode;
}
