'use strict';
// Exposes the MCP Apps channels (and nothing else) to the renderer.
const { contextBridge, ipcRenderer } = require('electron');

const CHANNELS = new Set(['mcp-apps:open', 'mcp-apps:result', 'mcp-apps:message', 'mcp-apps:close']);

contextBridge.exposeInMainWorld('mcpApps', {
  invoke(channel, ...args) {
    if (!CHANNELS.has(channel)) throw new Error(`unknown channel ${channel}`);
    return ipcRenderer.invoke(channel, ...args);
  },
});
