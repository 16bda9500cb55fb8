'use strict';
const fs = require('node:fs');
const path = require('node:path');

const SANDBOX_HTML = path.join(__dirname, 'renderer', 'sandbox.html');
// The main process's side of MCP Apps in an Electron host: ipcMain handlers over mcpmux's
// Pool.appView and Pool.appBridge. The renderer only carries messages between a view's frame
// and these handlers (renderer/host.js); everything the extension asks of a host (the
// handshake, the tool's input and result, the view's own calls kept to its server, the
// Content Security Policy) is mcpmux's.
//
//   registerMcpApps(ipcMain, pool, { hostContext, onHostRequest })
//
// Channels (each answered with ipcRenderer.invoke):
//   mcp-apps:open     (toolId, args)  calls the tool and gives the view to render
//   mcp-apps:result   (id)            the messages the view is due once the call ends
//   mcp-apps:message  (id, message)   one message the view posted: the messages to post back
//   mcp-apps:close    (id)            the view was taken down
//
// And the page of a view's sandbox proxy (renderer/sandbox.html), for the protocol handler of
// its origin: `sandboxPage(url)` for `...sandbox.html?view=ID`.

/** What the host tells views of itself (`ui/initialize`'s hostContext). */
const DEFAULT_HOST_CONTEXT = Object.freeze({
  theme: 'light',
  displayMode: 'inline',
  availableDisplayModes: ['inline'],
  platform: 'desktop',
});

/** Refuses what this host does not offer a view (opening links, chat messages, ...). */
async function refuseHostRequest(message) {
  throw new Error(`${message.method} is not offered by this host`);
}

function registerMcpApps(ipcMain, pool, options = {}) {
  const hostContext = options.hostContext ?? DEFAULT_HOST_CONTEXT;
  const onHostRequest = options.onHostRequest ?? refuseHostRequest;
  const views = new Map();
  let next = 0;

  const viewOf = (id) => {
    const view = views.get(id);
    if (!view) throw new Error(`no open MCP App view ${id}`);
    return view;
  };

  ipcMain.handle('mcp-apps:open', async (_event, toolId, args = {}) => {
    const view = await pool.appView(toolId);
    const bridge = pool.appBridge(view, hostContext);
    const id = ++next;
    // The call runs while the frame loads: the bridge holds its input and result until the
    // view says it is initialized, then hands them out in order.
    bridge.toolInput(args);
    const outcome = pool.callTool(toolId, args).then(
      (result) => bridge.toolResult(result),
      (err) => bridge.toolCancelled(err.message),
    );
    views.set(id, { bridge, outcome, contentSecurityPolicy: view.contentSecurityPolicy });
    return {
      id,
      html: view.html,
      contentSecurityPolicy: view.contentSecurityPolicy,
      allow: view.allow,
      csp: view.csp,
      permissions: view.permissions,
      prefersBorder: view.prefersBorder,
    };
  });

  ipcMain.handle('mcp-apps:result', async (_event, id) => viewOf(id).outcome);

  ipcMain.handle('mcp-apps:message', async (_event, id, message) => {
    const { bridge } = viewOf(id);
    const { post, host } = await bridge.handle(message);
    let resize;
    if (host?.method === 'ui/notifications/size-changed') {
      resize = host.params;
    } else if (host && host.id !== undefined) {
      // Requests only the host decides: its answer, or its refusal, goes back to the view.
      try {
        post.push(bridge.reply(host.id, (await onHostRequest(host)) ?? {}));
      } catch (err) {
        post.push(bridge.reply(host.id, err));
      }
    }
    return { post, resize };
  });

  ipcMain.handle('mcp-apps:close', async (_event, id) => {
    views.delete(id);
  });

  /**
   * The sandbox proxy's page for the view `url` names (`?view=ID`): status, headers and HTML.
   * The view's policy is the proxy's own, as a header: the view shares the proxy's origin, so
   * without it the view could fetch, frame or load scripts through the proxy's document, and
   * navigate its own frame anywhere (a policy in the view's document binds that document
   * alone). The view's document inherits it.
   */
  const sandboxPage = (url) => {
    const view = views.get(Number(url.searchParams.get('view')));
    if (!view) return { status: 404, headers: {}, html: 'no such view' };
    return {
      status: 200,
      headers: { 'content-security-policy': view.contentSecurityPolicy },
      html: fs.readFileSync(SANDBOX_HTML, 'utf8'),
    };
  };

  return { views, sandboxPage };
}

module.exports = { registerMcpApps, DEFAULT_HOST_CONTEXT };
