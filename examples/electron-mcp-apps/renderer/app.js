'use strict';
// Shows the view of the tool main.js names (the window's query string), served by the
// sandbox protocol main.js registers.
const params = new URLSearchParams(location.search);
window.showMcpApp(
  document.getElementById('apps'),
  params.get('tool'),
  JSON.parse(params.get('args') || '{}'),
  'mcp-sandbox://view/sandbox.html',
);
