//! The host application's own tools in the pool: registered here, then listed, searched and
//! called beside the servers' tools (`tools::host_tools` holds and runs them).

use crate::error::Result;
use crate::events::Event;
use crate::pool::Pool;
use crate::tools::ToolInfo;
use crate::tools::host_tools::{HOST_TOOLS_SERVER, HostTool};

impl Pool {
    /// Adds (or replaces) a tool of the host application, listed and searched with the
    /// servers' tools under its own name and called in-process.
    pub fn register_tool(&self, tool: HostTool) -> Result<ToolInfo> {
        let info = self.inner.local.register(tool)?;
        self.inner.tools_changed();
        self.inner.events.emit(Event::ToolsChanged {
            server_id: HOST_TOOLS_SERVER.into(),
        });
        Ok(info)
    }

    /// Removes a host tool; returns whether it existed.
    pub fn unregister_tool(&self, name: &str) -> bool {
        let removed = self.inner.local.unregister(name);
        if removed {
            self.inner.tools_changed();
            self.inner.events.emit(Event::ToolsChanged {
                server_id: HOST_TOOLS_SERVER.into(),
            });
        }
        removed
    }
}
