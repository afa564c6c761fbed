// The exported page's simulator: routesim compiled to WebAssembly, run
// once per view as `routesim explore --request JSON`; its stdout lines
// are the events the server would stream.
"use strict";
importScripts("wasm_exec.js");

let compiled = null;
onmessage = async e => {
  try {
    if (!compiled) compiled = await WebAssembly.compile(await (await fetch("routesim.wasm")).arrayBuffer());
    const dec = new TextDecoder();
    let out = "", err = "";
    globalThis.fs.writeSync = (fd, b) => {
      const s = dec.decode(b);
      if (fd !== 1) { err += s; return b.length; }
      out += s;
      let i;
      while ((i = out.indexOf("\n")) >= 0) { postMessage({ line: out.slice(0, i) }); out = out.slice(i + 1); }
      return b.length;
    };
    const go = new Go();
    go.argv = ["routesim", "explore", "--request", JSON.stringify(e.data.request)];
    let code = 0;
    go.exit = c => { code = c; };
    await go.run(await WebAssembly.instantiate(compiled, go.importObject));
    postMessage({ end: true, error: code === 0 ? "" : (err.replace(/^routesim: /, "").trim() || "exit status " + code) });
  } catch (x) {
    postMessage({ end: true, error: "the WebAssembly simulator failed: " + x });
  }
};
