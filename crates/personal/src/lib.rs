//! The personal family: tasks (`create_task`, `list_tasks`, `update_task`) and
//! `get_system_info`. Notes (`quick_note`) live in the vault family; weather and news join later.
//!
//! Tool types are private: the only thing this crate hands out is a [`ToolProvider`] for the
//! registry, so no shell can call a tool except through the scheduler.

mod schema;
mod system;
mod tasks;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

use cowork_contract::{DynTool, ToolProvider};
use cowork_store::{Store, StoreError};
use rusqlite::Connection;
use std::sync::{Arc, Mutex};

pub(crate) type Db = Arc<Mutex<Connection>>;

#[derive(Clone)]
pub struct PersonalTools {
    db: Db,
}

impl PersonalTools {
    pub fn new(store: &Store) -> Result<Self, StoreError> {
        Ok(PersonalTools {
            db: Arc::new(Mutex::new(store.connect()?)),
        })
    }
}

impl ToolProvider for PersonalTools {
    fn name(&self) -> &str {
        "personal"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        [self.task_tools(), self.system_tools()].concat()
    }
}

pub(crate) use cowork_store::tool_error as db_error;
