'use strict';
// An Electron host showing an MCP App: `npx electron . [tool id] [server command...]`.
// Without arguments it runs the example MCP App server from npm
// (@modelcontextprotocol/server-basic-vanillajs) and shows its `get-time` view.
const path = require('node:path');
const { app, BrowserWindow, ipcMain, protocol, shell } = require('electron');
const { Pool } = require('mcpmux');
const { registerMcpApps } = require('./mcp-apps');

// The sandbox proxy's origin: a scheme of its own, so the view never shares the host's.
protocol.registerSchemesAsPrivileged([
  { scheme: 'mcp-sandbox', privileges: { standard: true, secure: true, supportFetchAPI: true } },
]);

async function main() {
  const [toolId = 'mcp__clock__get-time', ...command] = process.argv.slice(2).filter((a) => a !== '.');
  const pool = await Pool.open({ apps: {} });
  if (!(await pool.listServers()).some((s) => s.name === 'clock')) {
    const [cmd, ...args] = command.length ? command : ['npx', '-y', '@modelcontextprotocol/server-basic-vanillajs', '--stdio'];
    await pool.addServer({ name: 'clock', config: { command: cmd, args } });
  }
  const apps = registerMcpApps(ipcMain, pool, {
    // Links open in the user's browser; everything else a view asks of the host is refused.
    onHostRequest: async (message) => {
      if (message.method !== 'ui/open-link') throw new Error(`${message.method} is not offered`);
      await shell.openExternal(String(message.params?.url));
      return {};
    },
  });
  await app.whenReady();
  // Each view's proxy page, under that view's Content Security Policy.
  protocol.handle('mcp-sandbox', (request) => {
    const page = apps.sandboxPage(new URL(request.url));
    return new Response(page.html, { status: page.status, headers: { 'content-type': 'text/html', ...page.headers } });
  });
  const window = new BrowserWindow({
    width: 720,
    height: 640,
    webPreferences: { preload: path.join(__dirname, 'preload.js'), contextIsolation: true, sandbox: true },
  });
  await window.loadFile(path.join(__dirname, 'renderer', 'index.html'), {
    query: { tool: toolId, args: '{}' },
  });
  app.on('window-all-closed', async () => {
    await pool.close();
    app.quit();
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
