// Browser compute for the outcome view, chosen by measurement: one SGD step of the browser preset's MLP (a batch of 10
// inputs of 192 values, 192 -> 16 (ReLU) -> 2, softmax cross-entropy) with TensorFlow.js 4.22 (wasm and cpu backends)
// against the hand-written typed-array trainer of hetfl_explore/widgets/static/trainer.js. TensorFlow.js is not shipped
// with the site; install it into a scratch folder to run this comparison:
//   mkdir -p /tmp/tfjs && npm install --prefix /tmp/tfjs @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-wasm@4.22.0
//   cat hetfl_explore/widgets/static/hetero.js hetfl_explore/widgets/static/trainer.js > /tmp/tfjs/trainer.mjs
//   NODE_PATH=/tmp/tfjs/node_modules node benchmarks/browser_compute.cjs /tmp/tfjs
const STEPS = 720, WARM = 50, d = 192, H = 16, C = 2, B = 10;
const dir = process.argv[2] || '/tmp/tfjs';

async function tfjsStep(backend) {
  const tf = require('@tensorflow/tfjs'); require('@tensorflow/tfjs-backend-wasm');
  if (backend === 'wasm') require('@tensorflow/tfjs-backend-wasm').setWasmPaths(`${dir}/node_modules/@tensorflow/tfjs-backend-wasm/dist/`);
  await tf.setBackend(backend); await tf.ready();
  const W1 = tf.variable(tf.randomUniform([d, H], -0.07, 0.07)), b1 = tf.variable(tf.zeros([H]));
  const W2 = tf.variable(tf.randomUniform([H, C], -0.25, 0.25)), b2 = tf.variable(tf.zeros([C]));
  const opt = tf.train.sgd(0.5), X = tf.randomUniform([400, d]);
  const Y = tf.oneHot(tf.tensor1d(Array.from({length: 400}, (_, i) => i % 2), 'int32'), 2);
  const step = i => { const s = (i * B) % 390, xb = tf.slice(X, [s, 0], [B, d]), yb = tf.slice(Y, [s, 0], [B, C]);
    opt.minimize(() => tf.losses.softmaxCrossEntropy(yb, tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(xb, W1), b1)), W2), b2)));
    xb.dispose(); yb.dispose(); };
  return timed(step);
}

async function handStep() {
  const T = await import(`${dir}/trainer.mjs`), u = T.makeRng(1);
  const meta = {name: 'random', classes: ['a', 'b'], attrs: ['r', 'g', 'b'], side: 8, channels: 3, train: 400, test: 0};
  const bytes = Uint8Array.from({length: 6 * 400 * d}, () => Math.floor(256 * u()));
  const pool = T.withLabels(T.preparePool(meta, bytes)), w = T.initWeights(d, H, C, u), t = T.scratch(d, H, C, B);
  return timed(i => { const b = []; for (let j = 0; j < B; j++) b.push((i * B + j) % 2400); T.sgdStep(pool, w, b, pool.labels, 0.5, H, C, t); });
}

function timed(step) {
  for (let i = 0; i < WARM; i++) step(i);
  const t0 = performance.now();
  for (let i = 0; i < STEPS; i++) step(i);
  return 1000 * (performance.now() - t0) / STEPS;
}

(async () => {
  const us = {'hand-written typed arrays': await handStep(), 'TensorFlow.js 4.22 wasm': await tfjsStep('wasm'), 'TensorFlow.js 4.22 cpu': await tfjsStep('cpu')};
  for (const [k, v] of Object.entries(us)) console.log(`${k.padEnd(28)} ${v.toFixed(0).padStart(6)} us per SGD step (batch ${B}, ${d} -> ${H} -> ${C})`);
  console.log(`load average ${require('os').loadavg()[0].toFixed(1)} on ${require('os').cpus().length} cores`);
})();
