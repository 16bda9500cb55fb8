//! Generational integer handles: what C holds instead of pointers, so that a closed, stale
//! or made-up handle is an error code and never a dangling pointer.
//!
//! A handle is `tag << 56 | generation << 32 | index`. The tag tells kinds of objects apart
//! (pools now; agents and the like later), the generation changes each time a slot is
//! freed, so an old handle to a reused slot no longer matches. No valid handle is 0.

use std::sync::{Arc, Mutex};

use crate::error::{FfiError, FfiResult};
use crate::mcpmux_status::MCPMUX_ERR_INVALID_HANDLE;

const GENERATION_BITS: u32 = 24;
const GENERATION_MASK: u64 = (1 << GENERATION_BITS) - 1;

/// The kinds of handles; a tag is never reused for another kind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Tag {
    Pool = 1,
    Agent = 2,
    Provider = 3,
    Conversation = 4,
    HttpServer = 5,
    AppBridge = 6,
    TaskRun = 7,
}

struct Slot<T> {
    generation: u32,
    value: Option<Arc<T>>,
}

/// A table of live objects of one kind.
pub(crate) struct Table<T> {
    tag: Tag,
    name: &'static str,
    inner: Mutex<Vec<Slot<T>>>,
}

impl<T> Table<T> {
    pub const fn new(tag: Tag, name: &'static str) -> Self {
        Table {
            tag,
            name,
            inner: Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Slot<T>>> {
        // A panic while holding this lock cannot leave a slot half-written, so the data
        // is still consistent and the table stays usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn insert(&self, value: Arc<T>) -> u64 {
        let mut slots = self.lock();
        let index = match slots.iter().position(|s| s.value.is_none()) {
            Some(i) => i,
            None => {
                slots.push(Slot {
                    generation: 0,
                    value: None,
                });
                slots.len() - 1
            }
        };
        let slot = &mut slots[index];
        slot.generation = next_generation(slot.generation);
        slot.value = Some(value);
        self.encode(index as u32, slot.generation)
    }

    fn encode(&self, index: u32, generation: u32) -> u64 {
        (self.tag as u64) << 56 | (generation as u64 & GENERATION_MASK) << 32 | index as u64
    }

    fn decode(&self, handle: u64) -> Option<(usize, u32)> {
        if (handle >> 56) as u8 != self.tag as u8 {
            return None;
        }
        let generation = ((handle >> 32) & GENERATION_MASK) as u32;
        Some(((handle & 0xFFFF_FFFF) as usize, generation))
    }

    fn invalid(&self, handle: u64) -> FfiError {
        FfiError::new(
            MCPMUX_ERR_INVALID_HANDLE,
            format!(
                "{} handle {handle:#x} is not open (closed, or never valid)",
                self.name
            ),
        )
    }

    pub fn get(&self, handle: u64) -> FfiResult<Arc<T>> {
        let (index, generation) = self.decode(handle).ok_or_else(|| self.invalid(handle))?;
        let slots = self.lock();
        match slots.get(index) {
            Some(Slot {
                generation: g,
                value: Some(v),
            }) if *g == generation => Ok(v.clone()),
            _ => Err(self.invalid(handle)),
        }
    }

    /// Takes the object out; the handle is invalid from now on.
    pub fn remove(&self, handle: u64) -> FfiResult<Arc<T>> {
        let (index, generation) = self.decode(handle).ok_or_else(|| self.invalid(handle))?;
        let mut slots = self.lock();
        match slots.get_mut(index) {
            Some(slot) if slot.generation == generation && slot.value.is_some() => {
                Ok(slot.value.take().expect("checked above"))
            }
            _ => Err(self.invalid(handle)),
        }
    }
}

/// Generations run 1..=2^24-1, so a handle's generation bits are never all zero.
fn next_generation(g: u32) -> u32 {
    let n = (g + 1) & GENERATION_MASK as u32;
    if n == 0 { 1 } else { n }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_foreign_and_zero_handles_are_rejected() {
        let t: Table<u32> = Table::new(Tag::Pool, "pool");
        let h = t.insert(Arc::new(7));
        assert_ne!(h, 0);
        assert_eq!(*t.get(h).unwrap(), 7);
        assert!(t.get(0).is_err());
        assert!(t.get(h ^ (1 << 56)).is_err(), "another tag");
        assert_eq!(*t.remove(h).unwrap(), 7);
        assert!(t.get(h).is_err());
        assert!(t.remove(h).is_err(), "double close");
        // The slot is reused under a new generation: the old handle stays invalid.
        let h2 = t.insert(Arc::new(8));
        assert_eq!(h2 & 0xFFFF_FFFF, h & 0xFFFF_FFFF);
        assert_ne!(h2, h);
        assert!(t.get(h).is_err());
        assert_eq!(*t.get(h2).unwrap(), 8);
    }

    #[test]
    fn generations_skip_zero() {
        assert_eq!(next_generation(GENERATION_MASK as u32), 1);
        assert_eq!(next_generation(0), 1);
    }
}
