// The outcome view's Web Worker (joined after hetero.js and trainer.js into one module): it prepares the pool once,
// warms the trainer up on a one-round job (so the first point of a real job is not spent compiling), then trains
// each job it is sent and posts every run's round as it ends. A job is cancelled by terminating the worker.
let POOL = null;
self.onmessage = ({data: m}) => {
  if (m.type === 'pool') {
    POOL = withLabels(preparePool(m.meta, m.bytes));
    const rows = [{m: 2, N: [[4, 1], [1, 4]]}];
    runJob(POOL, {rows, k: 1, selectors: ['uniform', 'feddiverse'], cfg: {rounds: 2, seeds: 1, scale: 1}}, () => {});
    self.postMessage({type: 'ready'});
    return;
  }
  try {
    runJob(POOL, m, p => self.postMessage({type: 'round', id: m.id, ...p}));
    self.postMessage({type: 'done', id: m.id});
  } catch (e) {
    self.postMessage({type: 'error', id: m.id, message: String(e && e.message || e)});
  }
};
