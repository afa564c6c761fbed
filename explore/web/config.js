// Served by routesim explore: the page asks the server to simulate.
// routesim explore --export replaces it (the page then simulates in a
// Web Worker running the WebAssembly build).
window.EXPLORE_STATIC = false;
