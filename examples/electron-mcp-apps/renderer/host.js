'use strict';
// The renderer's side of MCP Apps: shows a tool's view in a sandbox proxy frame (on an origin
// of its own, renderer/sandbox.html) and carries messages between the view and the main
// process (mcp-apps.js) through window.mcpApps.invoke, which preload.js exposes.

/**
 * Calls `toolId` with `args` and shows its view in `container`; `sandboxUrl` is where the
 * sandbox proxy is served. Resolves with the frame once it is placed.
 */
async function showMcpApp(container, toolId, args, sandboxUrl) {
  const opened = await window.mcpApps.invoke('mcp-apps:open', toolId, args);
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  if (opened.allow) frame.setAttribute('allow', opened.allow);
  frame.style.border = opened.prefersBorder === false ? '0' : '1px solid #ccc';
  frame.style.width = '100%';
  frame.src = `${sandboxUrl}?view=${encodeURIComponent(opened.id)}`;
  const post = (messages) => {
    for (const message of messages) frame.contentWindow.postMessage(message, '*');
  };
  let ready = false;
  window.addEventListener('message', async (event) => {
    if (event.source !== frame.contentWindow) return;
    const message = event.data;
    if (message?.method === 'ui/notifications/sandbox-proxy-ready') {
      // Once: a proxy that loads again (the view navigated it) gets nothing.
      if (ready) return;
      ready = true;
      post([
        {
          jsonrpc: '2.0',
          method: 'ui/notifications/sandbox-resource-ready',
          params: {
            html: opened.html,
            csp: opened.csp,
            permissions: opened.permissions,
            contentSecurityPolicy: opened.contentSecurityPolicy,
          },
        },
      ]);
      return;
    }
    if (!ready || typeof message !== 'object' || message === null) return;
    const answer = await window.mcpApps.invoke('mcp-apps:message', opened.id, message);
    post(answer.post);
    if (answer.resize?.height) frame.style.height = `${answer.resize.height}px`;
  });
  container.appendChild(frame);
  window.mcpApps.invoke('mcp-apps:result', opened.id).then(post);
  return frame;
}

window.showMcpApp = showMcpApp;
