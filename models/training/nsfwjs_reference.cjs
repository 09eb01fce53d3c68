// nsfwjs's own MobileNetV2 run by TensorFlow.js, the reference nsfwjs.py checks its conversion against.
// usage: NODE_PATH=<folder with nsfwjs and @tensorflow/tfjs installed> node nsfwjs_reference.cjs <photos.bin> <n> <out.json>
// photos.bin: n x 224 x 224 x 3 uint8 RGB. Writes the n x 5 class probabilities as JSON (not to stdout:
// TensorFlow.js prints a banner there).
const fs = require("node:fs");
const tf = require("@tensorflow/tfjs");
const nsfwjs = require("nsfwjs");

(async () => {
  await tf.setBackend("cpu");
  const model = await nsfwjs.load("MobileNetV2", { size: 224 });
  const n = Number(process.argv[3]);
  const pixels = new Uint8Array(fs.readFileSync(process.argv[2]));
  // nsfwjs's classify(): RGB as float, divided by 255; the photos are already 224 x 224
  const x = tf.tensor4d(pixels, [n, 224, 224, 3], "int32").toFloat().div(255);
  fs.writeFileSync(process.argv[4], JSON.stringify(await model.model.predict(x).array()));
})();
