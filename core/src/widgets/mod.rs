//! What an agent shows besides text: recipes, markdown documents that describe a widget and
//! its parameters ([`recipes`]), and the canvas of widgets shown so far ([`canvas`]).

pub mod canvas;
pub mod recipes;
