/** The spec's upload limit (§8), enforced in the core too so the CLI and the channel worker share it. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/**
 * Pixel budget per image: the largest common phone sensors fit (50 MP: 8160×6144 or 8192×6144; an iPhone's 48 MP
 * "HEIF Max", 8064×6048); a small file that claims a huge canvas (a pixel bomb) does not.
 */
export const MAX_INPUT_PIXELS = 52_000_000;
/** MAX_INPUT_PIXELS as the docs and messages say it. */
export const MAX_INPUT_MEGAPIXELS = MAX_INPUT_PIXELS / 1_000_000;

/**
 * Decoded photos are kept at most this size on their shorter side. The leaf crops are cut from a working image of
 * 256 px (classes.json `views.working_size`), the model's views are smaller and the quality checks use 128 px, so
 * more pixels would only cost memory and time: a 12 MP JPEG shrinks by 8 while decoding (libjpeg's scaled IDCT)
 * instead of by 4 at 512 px, and the resizes after it have a quarter of the pixels to read.
 */
export const WORKING_SHORT_SIDE = 256;

/**
 * Photos are shrunk to WORKING_SHORT_SIDE while decoding only from this shorter side on; smaller ones are decoded
 * whole. Shrinking one by less than 2 saves little, and would put libvips' filter before the Pillow filter the
 * model's views are made with (model/resample.ts): on 416 px field photos that moved the leaves and distances
 * the model reads past the Python twin's (models/parity.json), while decoded whole they match it exactly.
 */
export const SHRINK_FROM_SHORT_SIDE = 2 * WORKING_SHORT_SIDE;

/**
 * Photos are at most this elongated (phone panoramas stay under ~6:1; the rice photos are ~3.4:1). A 40000×1 strip
 * is not a photo, and resizing its shorter side to model scale would blow up its longer side.
 */
export const MAX_ASPECT_RATIO = 20;

/**
 * A HEIC's embedded thumbnail is decoded instead of its primary image when its shorter side has at least this many
 * pixels: the model's views are cut from a 256 px working image and the quality checks use 128 px, so a phone's
 * 320×240 thumbnail loses the leaf crops a few pixels (about 2 s of HEVC decoding saved for ~6 % less
 * resolution), and a blur or exposure problem of the photo shows in its thumbnail as it does in the shrunk
 * primary image.
 */
export const THUMBNAIL_MIN_SHORT_SIDE = 224;
