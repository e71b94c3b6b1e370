//! Tauri commands, one module per part of the window: each command calls the core (through
//! cowork-app) and shapes nothing but the transport. What the window learns without asking
//! arrives as events (`crate::events`).

pub mod accounts;
pub mod approvals;
pub mod apps;
pub mod audit;
pub mod chat;
pub mod conversations;
pub mod desktop;
pub mod doctor;
pub mod model;
pub mod policy;
pub mod schedules;
pub mod suspensions;
pub mod toolpacks;
pub mod tools;
pub mod vault;
pub mod voice;
pub mod web;
pub mod workspace;

/// A command's answer: its value, or the error the window shows as it is.
type Res<T> = Result<T, String>;
