// A static page's loader for anywidget models saved in a notebook's widget state (no kernel, no network): loaded with
// require.js before @jupyter-widgets/html-manager's embed-amd.js, it defines the AMD module 'anywidget' so that the
// widget manager finds it locally instead of fetching it from a CDN. A saved AnyModel carries its ES module in `_esm`;
// the view imports it from a blob URL and calls its `render({model, el})` with a model that reads and writes the saved
// state in the page (`save_changes` has no kernel to tell).
define('anywidget', ['@jupyter-widgets/base'], function (base) {
  class AnyModel extends base.DOMWidgetModel {}
  class AnyView extends base.DOMWidgetView {
    async render() {
      const url = URL.createObjectURL(new Blob([this.model.get('_esm')], {type: 'text/javascript'}));
      let mod;
      try { mod = await import(url); } finally { URL.revokeObjectURL(url); }
      const widget = typeof mod.default === 'function' ? await mod.default() : mod.default;
      const m = this.model, model = {
        get: k => m.get(k), set: (k, v) => m.set(k, v), on: (e, f) => m.on(e, f), off: (e, f) => m.off(e, f),
        save_changes: () => {}, send: () => {}, widget_manager: m.widget_manager,
      };
      if (widget.initialize) await widget.initialize({model});
      this._cleanup = await widget.render({model, el: this.el});
    }
    remove() { if (typeof this._cleanup === 'function') this._cleanup(); return super.remove(); }
  }
  return {AnyModel, AnyView};
});
