//! Upstream traffic passed on to the served clients it belongs to: list changes, resource
//! subscriptions, tasks, input rounds, the requests upstreams make of their client, log
//! messages, and the seal on what a client carries back.

pub(super) mod changes;
pub(super) mod host_requests;
pub(super) mod input_rounds;
pub(super) mod logging;
pub(super) mod seal;
pub(super) mod subscriptions;
pub(super) mod tasks;
