//! What a stdio server may reach, as its record says (`config.sandbox`): the files it may read
//! and write, whether it may use the network, and how much memory and how many open files it
//! and processes may hold. How the kernel is made to keep it is `transport::sandbox`'.

use serde::{Deserialize, Serialize};

use crate::config::record::TransportType;

/// The sandbox of a stdio server: everything not granted here is denied. The server's own
/// program, its runtime's install folders and caches (node and npx, uv and uvx, a
/// virtualenv), the system's libraries and a private temporary folder are found for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sandbox {
    /// Paths the server may read (a folder with everything under it); `~` is the home folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Paths the server may read and write (a folder with everything under it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// Whether the server may use the network at all (default: none).
    #[serde(default, skip_serializing_if = "Network::is_none")]
    pub network: Network,
    /// The most memory the server's process may allocate, in MiB (its data segment: what it
    /// writes to, not the address space a runtime reserves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// The most files and sockets the server's process may hold open at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u64>,
    /// The most processes and threads the server may run at once, itself included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// Refuse to start the server where the kernel cannot keep all of this sandbox, instead
    /// of starting it with what the kernel can keep (and a warning).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// What of the network a sandboxed server may reach.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// Nothing: the server runs in a network namespace of its own, without even loopback.
    #[default]
    None,
    /// The host's whole network, as an unsandboxed server has.
    All,
}

impl Sandbox {
    /// Why this sandbox cannot be kept for a server reached by `transport`, if it cannot.
    pub(crate) fn validate(&self, transport: TransportType) -> Result<(), String> {
        if transport != TransportType::Stdio {
            return Err(format!(
                "only a stdio server runs on this machine to be sandboxed; this one is {} \
                 (remove `sandbox`)",
                transport.as_str()
            ));
        }
        if let Some(path) = self
            .read
            .iter()
            .chain(&self.write)
            .find(|p| p.trim().is_empty())
        {
            return Err(format!("a path is empty ({path:?}): name a file or folder"));
        }
        let zero = [
            ("memoryMb", self.memory_mb),
            ("openFiles", self.open_files),
            ("processes", self.processes),
        ];
        if let Some((name, _)) = zero.iter().find(|(_, v)| *v == Some(0)) {
            return Err(format!("{name} must be 1 or more, or absent for no limit"));
        }
        Ok(())
    }
}

impl Network {
    fn is_none(&self) -> bool {
        *self == Network::None
    }
}
