//! The listing of every server's tools, kept as places: for each id, the server's cached list
//! and the tool's place in it. Asked again with nothing changed, a listing copies each tool
//! out of the lists once, rather than naming every tool again, checking each id against the
//! index and sorting the whole fleet (most of the 5 ms a listing of 50 servers × 100 tools
//! took, asked by a tool picker, an agent's host or a served client's `tools/list` at will).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use crate::pool::Inner;
use crate::pool::server::slot::Slot;
use crate::tools::stored_tool::StoredTool;
use crate::tools::{ToolInfo, ToolList, name_tools};

/// Every tool of one listing, in id order, as places in the lists it was made from.
pub(crate) struct FullListing {
    /// The `tools_version` it was made at (a changed record, host tool or list bumps it).
    version: u64,
    /// The servers it was made from, in `Inner::active_slots` order.
    servers: Vec<ListedServer>,
    tools: Vec<Place>,
}

/// One server of a [`FullListing`].
struct ListedServer {
    id: String,
    name: String,
    /// The list the places point into. Weak, so that a list replaced since is not kept; and
    /// while it lives its allocation is not reused, so an equal pointer is the same list.
    list: Weak<Vec<StoredTool>>,
}

/// Where one tool of a [`FullListing`] comes from.
struct Place {
    /// An index into `servers`, or [`HOST`].
    server: u32,
    /// The tool's place in its server's list (in the host's listing for [`HOST`]).
    tool: u32,
    id: Box<str>,
}

/// The `server` of the host's own tools, which are listed by `HostTools` each time.
const HOST: u32 = u32::MAX;

impl FullListing {
    /// Names the tools of `lists` (every active server's, fresh) and of the host, in id order.
    fn new(version: u64, lists: &[(Arc<Slot>, ToolList)], host: &[ToolInfo]) -> FullListing {
        let records: Vec<_> = lists
            .iter()
            .map(|(slot, list)| (slot.record(), list.clone()))
            .collect();
        let servers = records
            .iter()
            .map(|(record, list)| ListedServer {
                id: record.id.clone(),
                name: record.name.clone(),
                list: Arc::downgrade(list),
            })
            .collect();
        let named = name_tools(&records)
            .into_iter()
            .map(|(server, tool, id)| Place {
                server: server as u32,
                tool: tool as u32,
                id: id.into(),
            });
        let hosted = host.iter().enumerate().map(|(tool, t)| Place {
            server: HOST,
            tool: tool as u32,
            id: t.id.as_str().into(),
        });
        let mut tools: Vec<Place> = named.chain(hosted).collect();
        tools.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        FullListing {
            version,
            servers,
            tools,
        }
    }

    /// Whether it was made at `version` from these very lists.
    fn fits(&self, version: u64, lists: &[(Arc<Slot>, ToolList)]) -> bool {
        self.version == version
            && self.servers.len() == lists.len()
            && self.servers.iter().zip(lists).all(|(s, (slot, list))| {
                s.id == slot.id && std::ptr::eq(s.list.as_ptr(), Arc::as_ptr(list))
            })
    }

    /// The tools, copied out of `lists` (which [`FullListing::fits`]) and `host`.
    fn tools(&self, lists: &[(Arc<Slot>, ToolList)], host: Vec<ToolInfo>) -> Vec<ToolInfo> {
        let mut host: Vec<Option<ToolInfo>> = host.into_iter().map(Some).collect();
        self.tools
            .iter()
            .filter_map(|place| {
                let tool = place.tool as usize;
                if place.server == HOST {
                    return host.get_mut(tool).and_then(Option::take);
                }
                let server = &self.servers[place.server as usize];
                let (_, list) = &lists[place.server as usize];
                let stored = list.get(tool)?;
                Some(stored.info(place.id.to_string(), &server.id, &server.name))
            })
            .collect()
    }
}

impl Inner {
    /// Every tool, in id order, when every active server has a list fresh enough to answer
    /// from; `None` when one must be asked first.
    pub(in crate::pool) fn list_fresh(&self) -> Option<Vec<ToolInfo>> {
        // Read before the lists: a change made meanwhile leaves a listing no later reader uses.
        let version = self.tools_version.load(Ordering::SeqCst);
        let lists = self.fresh_lists()?;
        let host = self.local.list();
        let cached = self.listing.lock().unwrap().clone();
        let listing = match cached.filter(|l| l.fits(version, &lists)) {
            Some(listing) => listing,
            None => {
                let listing = Arc::new(FullListing::new(version, &lists, &host));
                self.index_listing(&listing, &lists);
                *self.listing.lock().unwrap() = Some(listing.clone());
                listing
            }
        };
        Some(listing.tools(&lists, host))
    }

    /// Each active server with its cached list, if every one is fresh (within its TTL and
    /// fetched since the server's last `list_changed`).
    fn fresh_lists(&self) -> Option<Vec<(Arc<Slot>, ToolList)>> {
        self.active_slots()
            .into_iter()
            .map(|slot| {
                let generation = slot.shared.tools_generation.load(Ordering::SeqCst);
                let list = slot
                    .tools
                    .lock()
                    .unwrap()
                    .as_ref()
                    .filter(|c| c.serves(generation, None))
                    .map(|c| c.tools.clone())?;
                Some((slot, list))
            })
            .collect()
    }

    /// Records a new listing's ids in the tool index, as a fetched listing's are.
    fn index_listing(&self, listing: &FullListing, lists: &[(Arc<Slot>, ToolList)]) {
        let mut index = self.tool_index.write().unwrap();
        for place in listing.tools.iter().filter(|p| p.server != HOST) {
            let server = &listing.servers[place.server as usize];
            let name = lists[place.server as usize].1[place.tool as usize].name();
            crate::pool::listing::tool_index::remember(&mut index, &place.id, &server.id, name);
        }
    }
}
