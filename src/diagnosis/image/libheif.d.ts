// libheif-js ships libheif compiled to WebAssembly with the C API exported as-is; these are the calls the core
// makes (libheif's heif.h documents them). Pointers are byte offsets into the module's heap. A C function that
// returns a struct (heif_error: int code, int subcode, const char* message) takes a pointer to write it to
// as its first argument.
declare module "libheif-js/libheif-wasm/libheif-bundle.js" {
  type Ptr = number;
  /** Emscripten's module settings: where the C code's stdout and stderr lines go (default: console.log, console.error). */
  interface LibheifOptions {
    print?: (line: string) => void;
    printErr?: (line: string) => void;
  }
  export interface Libheif {
    HEAPU8: Uint8Array;
    HEAP32: Int32Array;
    HEAPU32: Uint32Array;
    _malloc(size: number): Ptr;
    _free(ptr: Ptr): void;
    _heif_context_alloc(): Ptr;
    _heif_context_free(context: Ptr): void;
    _heif_context_read_from_memory_without_copy(
      error: Ptr,
      context: Ptr,
      data: Ptr,
      size: number,
      options: Ptr,
    ): void;
    _heif_context_get_primary_image_handle(error: Ptr, context: Ptr, handleOut: Ptr): void;
    _heif_image_handle_release(handle: Ptr): void;
    _heif_image_handle_get_width(handle: Ptr): number;
    _heif_image_handle_get_height(handle: Ptr): number;
    _heif_image_handle_get_number_of_thumbnails(handle: Ptr): number;
    _heif_image_handle_get_list_of_thumbnail_IDs(handle: Ptr, ids: Ptr, count: number): number;
    _heif_image_handle_get_thumbnail(error: Ptr, handle: Ptr, id: number, handleOut: Ptr): void;
    _heif_image_handle_get_item_id(handle: Ptr): number;
    _heif_item_get_transformation_properties(context: Ptr, item: number, ids: Ptr, count: number): number;
    _heif_item_get_property_type(context: Ptr, item: number, property: number): number;
    _heif_item_get_property_transform_rotation_ccw(context: Ptr, item: number, property: number): number;
    _heif_decode_image(
      error: Ptr,
      handle: Ptr,
      imageOut: Ptr,
      colorspace: number,
      chroma: number,
      options: Ptr,
    ): void;
    _heif_image_release(image: Ptr): void;
    _heif_image_get_width(image: Ptr, channel: number): number;
    _heif_image_get_height(image: Ptr, channel: number): number;
    _heif_image_get_plane_readonly(image: Ptr, channel: number, strideOut: Ptr): Ptr;
  }
  /** A new, independent instance (its own WebAssembly memory), ready on return: the bundle embeds the binary. */
  const createLibheif: (options?: LibheifOptions) => Libheif;
  export default createLibheif;
}
