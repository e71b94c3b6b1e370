use serde::{Deserialize, Serialize};
use std::fmt;

/// What a tool call does to the world. A closed vocabulary (docs/trust.md): the PolicyBridge scores and
/// matches rules against these, so adding a kind is a deliberate change to policy too.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind")]
pub enum Effect {
    #[serde(rename = "fs.read")]
    FsRead { path: String },
    #[serde(rename = "fs.write")]
    FsWrite { path: String },
    #[serde(rename = "fs.delete")]
    FsDelete { path: String },
    #[serde(rename = "process.exec")]
    ProcessExec {
        command: String,
        /// What the workspace itself configured that this command would run (e.g. a repository's
        /// `filter.x.clean` or `!` alias), found when the effect is computed: an allow rule
        /// covers such a command only in a workspace the person trusts.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        workspace_code: Vec<String>,
    },
    #[serde(rename = "net.fetch")]
    NetFetch { origin: String },
    #[serde(rename = "browser.navigate")]
    BrowserNavigate { origin: String },
    #[serde(rename = "browser.act")]
    BrowserAct { origin: String },
    #[serde(rename = "mail.read")]
    MailRead { account: String },
    #[serde(rename = "mail.send")]
    MailSend {
        account: String,
        recipients: Vec<String>,
    },
    #[serde(rename = "calendar.read")]
    CalendarRead { calendar: String },
    #[serde(rename = "calendar.write")]
    CalendarWrite {
        calendar: String,
        /// People the event invites: a server with scheduling mails them, so it is egress.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attendees: Vec<String>,
    },
    #[serde(rename = "vault.read")]
    VaultRead,
    #[serde(rename = "vault.write")]
    VaultWrite,
    #[serde(rename = "tasks.read")]
    TasksRead,
    #[serde(rename = "tasks.write")]
    TasksWrite,
    #[serde(rename = "notes.write")]
    NotesWrite,
    #[serde(rename = "audio.capture")]
    AudioCapture,
    #[serde(rename = "audio.play")]
    AudioPlay,
    #[serde(rename = "secrets.read")]
    SecretsRead { name: String },
    /// Data of a kind people keep private ([`Sensitive`]) returned by a read: a stored password,
    /// a card, a medical record. Asked by default, wherever it comes from; `subject` is what a
    /// rule names (`mcp__vault__get_item(github)`).
    #[serde(rename = "sensitive.read")]
    SensitiveRead {
        category: Sensitive,
        subject: String,
    },
    #[serde(rename = "system.read")]
    SystemRead,
    #[serde(rename = "ui.ask")]
    UiAsk,
    /// Reads the person's data held by a service (a chat workspace, a bank account, a
    /// booking site): read-only, and what it reads is untrusted.
    #[serde(rename = "service.read")]
    ServiceRead { service: String },
    /// Changes the person's data at a service (`what`: the thing changed, e.g. a file name).
    #[serde(rename = "service.write")]
    ServiceWrite { service: String, what: String },
    #[serde(rename = "service.delete")]
    ServiceDelete { service: String, what: String },
    /// A message to people through a service other than mail (a chat channel, a DM).
    #[serde(rename = "message.send")]
    MessageSend {
        service: String,
        recipients: Vec<String>,
    },
    /// Gives people access to the person's data (sharing a file, inviting to a workspace).
    #[serde(rename = "data.share")]
    DataShare {
        service: String,
        recipients: Vec<String>,
    },
    /// Moves the person's money: a payment, a transfer, a booking paid for.
    #[serde(rename = "money.pay")]
    MoneyPay {
        payee: String,
        /// As the tool was given it (text, so no rounding); none when the tool takes none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        amount: Option<String>,
    },
    /// Changes how the person's account works: a password, contact details, a standing order.
    #[serde(rename = "account.change")]
    AccountChange { service: String, what: String },
    /// An MCP tool whose toolpack declared nothing, or whose declaration this call's arguments
    /// could not fill: unknown, and scored as risky.
    #[serde(rename = "mcp.call")]
    McpCall {
        server: String,
        tool: String,
        /// The declared field that could not be filled from the arguments (`kind` when the
        /// declared kind is not one Cowork knows); None when the tool declared nothing. Cowork's
        /// finding, never a pack's word: a declaration may not name this kind at all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unfilled: Option<String>,
    },
    /// A call to an MCP server that runs outside any sandbox (the person turned it off,
    /// bubblewrap cannot run here, or the server is reached over HTTP): whatever its tools
    /// declare, nothing limits what the server does.
    #[serde(rename = "mcp.unconfined")]
    McpUnconfined { server: String, why: String },
    /// An MCP server asks the person's model a question (MCP sampling): its words go to the
    /// model `model`, and the model's answer goes back to the server.
    #[serde(rename = "model.sample")]
    ModelSample { server: String, model: String },
}

/// Whether an effect only looks (allowed in plan mode, parallel-safe in a batch) or acts.
/// Reading a secret acts: it hands out a credential. A fetch acts: the request itself goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Looks,
    Acts,
}

/// Where an effect reaches: this machine and the person's own records, or out of it (people,
/// sites, code we do not control) — egress, asked while untrusted content steers the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Here,
    Out,
}

/// Whether Cowork can take the change back (workspace files are journaled, memory has a
/// restore, tasks and notes are the person's own lists) or it lasts elsewhere (a calendar
/// server, a service, an account): a lasting change is what untrusted content must not steer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undo {
    Undoable,
    Lasting,
}

/// How much harm one call can do at worst: a rule that allows every call of a high-risk kind
/// (no specifier) is flagged as broad when the person adds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Risk {
    Ordinary,
    High,
}

/// What kind of private data a sensitive read returns: a small fixed taxonomy, so a toolpack
/// author can say it and the person can read it (docs/mcp.md, "Sensitive reads").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Sensitive {
    /// Passwords, keys, tokens, recovery codes.
    Secrets,
    /// Card numbers and their codes, bank accounts.
    Payment,
    /// Medical and health records.
    Health,
    /// Passport, ID card, social-security and tax numbers.
    GovernmentId,
    /// Other people's private messages to the person.
    PrivateMessages,
}

impl Sensitive {
    pub const ALL: [Sensitive; 5] = [
        Sensitive::Secrets,
        Sensitive::Payment,
        Sensitive::Health,
        Sensitive::GovernmentId,
        Sensitive::PrivateMessages,
    ];

    /// Its name on the wire (`government_id`).
    pub fn as_str(self) -> &'static str {
        match self {
            Sensitive::Secrets => "secrets",
            Sensitive::Payment => "payment",
            Sensitive::Health => "health",
            Sensitive::GovernmentId => "government_id",
            Sensitive::PrivateMessages => "private_messages",
        }
    }

    /// Values of this kind are used, not read: a password is typed into a login, a card number
    /// into a checkout, so a remote model needs only a placeholder for them (the gate puts the
    /// value back after review). Health records and private messages are what the person asks
    /// the assistant to read, so the model sees those (the read asked first; its output taints).
    pub fn kept_home(self) -> bool {
        matches!(
            self,
            Sensitive::Secrets | Sensitive::Payment | Sensitive::GovernmentId
        )
    }
}

/// What a rule's specifier is matched against for this kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    Path,
    Command,
    Origin,
    Account,
    Calendar,
    Secret,
    Service,
    /// What is changed at a service (a file name, a setting).
    Thing,
    People,
    Payee,
    Tool,
    Server,
    Nothing,
}

/// Everything the policy knows of an effect kind, said in one row of [`EffectKind::class`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindClass {
    pub name: &'static str,
    pub access: Access,
    pub reach: Reach,
    pub undo: Undo,
    pub risk: Risk,
    pub subject: Subject,
}

/// Declares [`EffectKind`], [`EffectKind::ALL`] and [`EffectKind::class`] from one table, so
/// the kinds, their names and their classes cannot drift apart, and a new kind has no class
/// until its row gives it one.
macro_rules! effect_kinds {
    ($($(#[$doc:meta])* $kind:ident: $name:literal, $access:ident, $reach:ident, $undo:ident, $risk:ident, $subject:ident;)*) => {
        /// The effect kinds without their arguments: what a [`crate::ToolSpec`] declares up front.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "specta", derive(specta::Type))]
        pub enum EffectKind {
            $($(#[$doc])* #[serde(rename = $name)] $kind,)*
        }

        impl EffectKind {
            /// Every kind, in the table's order.
            pub const ALL: &[EffectKind] = &[$(EffectKind::$kind),*];

            /// Everything the policy knows of this kind: its row of the table.
            pub const fn class(self) -> KindClass {
                match self {
                    $(EffectKind::$kind => KindClass {
                        name: $name,
                        access: Access::$access,
                        reach: Reach::$reach,
                        undo: Undo::$undo,
                        risk: Risk::$risk,
                        subject: Subject::$subject,
                    },)*
                }
            }
        }
    };
}

// The effect vocabulary. Columns: the kind, its name on the wire, whether it only looks, where
// it reaches, whether Cowork can undo it, its worst harm, and what a rule's specifier matches.
effect_kinds! {
    FsRead:          "fs.read",         Looks, Here, Undoable, Ordinary, Path;
    FsWrite:         "fs.write",        Acts,  Here, Undoable, Ordinary, Path;
    FsDelete:        "fs.delete",       Acts,  Here, Undoable, High,     Path;
    ProcessExec:     "process.exec",    Acts,  Out,  Lasting,  High,     Command;
    NetFetch:        "net.fetch",       Acts,  Out,  Lasting,  Ordinary, Origin;
    BrowserNavigate: "browser.navigate", Acts,  Out,  Lasting,  Ordinary, Origin;
    BrowserAct:      "browser.act",     Acts,  Out,  Lasting,  Ordinary, Origin;
    MailRead:        "mail.read",       Looks, Here, Undoable, Ordinary, Account;
    MailSend:        "mail.send",       Acts,  Out,  Lasting,  High,     People;
    CalendarRead:    "calendar.read",   Looks, Here, Undoable, Ordinary, Calendar;
    /// With attendees it is egress too (`Effect::is_egress`): they are mailed.
    CalendarWrite:   "calendar.write",  Acts,  Here, Lasting,  Ordinary, Calendar;
    VaultRead:       "vault.read",      Looks, Here, Undoable, Ordinary, Nothing;
    VaultWrite:      "vault.write",     Acts,  Here, Undoable, Ordinary, Nothing;
    TasksRead:       "tasks.read",      Looks, Here, Undoable, Ordinary, Nothing;
    TasksWrite:      "tasks.write",     Acts,  Here, Undoable, Ordinary, Nothing;
    NotesWrite:      "notes.write",     Acts,  Here, Undoable, Ordinary, Nothing;
    AudioCapture:    "audio.capture",   Acts,  Here, Undoable, Ordinary, Nothing;
    AudioPlay:       "audio.play",      Acts,  Here, Undoable, Ordinary, Nothing;
    SecretsRead:     "secrets.read",    Acts,  Here, Undoable, High,     Secret;
    SensitiveRead:   "sensitive.read",  Acts,  Here, Undoable, High,     Thing;
    SystemRead:      "system.read",     Looks, Here, Undoable, Ordinary, Nothing;
    UiAsk:           "ui.ask",          Looks, Here, Undoable, Ordinary, Nothing;
    ServiceRead:     "service.read",    Looks, Here, Undoable, Ordinary, Service;
    ServiceWrite:    "service.write",   Acts,  Here, Lasting,  Ordinary, Thing;
    ServiceDelete:   "service.delete",  Acts,  Here, Lasting,  High,     Thing;
    MessageSend:     "message.send",    Acts,  Out,  Lasting,  High,     People;
    DataShare:       "data.share",      Acts,  Out,  Lasting,  High,     People;
    MoneyPay:        "money.pay",       Acts,  Out,  Lasting,  High,     Payee;
    AccountChange:   "account.change",  Acts,  Here, Lasting,  High,     Thing;
    McpCall:         "mcp.call",        Acts,  Out,  Lasting,  High,     Tool;
    McpUnconfined:   "mcp.unconfined",  Acts,  Out,  Lasting,  High,     Server;
    ModelSample:     "model.sample",    Acts,  Out,  Lasting,  Ordinary, Server;
}

impl EffectKind {
    pub fn as_str(self) -> &'static str {
        self.class().name
    }

    /// Reads only: allowed in plan mode, and parallel-safe in a batch.
    pub fn is_read_only(self) -> bool {
        self.class().access == Access::Looks
    }

    /// Sends data or control out of the machine (or to code we don't control): these are asked
    /// while the conversation is tainted by untrusted content.
    pub fn is_egress(self) -> bool {
        self.class().reach == Reach::Out
    }

    /// At worst a call of this kind does lasting harm: a rule allowing all of them is broad.
    pub fn is_high_risk(self) -> bool {
        self.class().risk == Risk::High
    }

    /// Its subject is a file path.
    pub fn is_file(self) -> bool {
        self.class().subject == Subject::Path
    }
}

impl Effect {
    /// The kind of private data this read returns that stays home — reaches a remote model only
    /// as placeholders (see [`Sensitive::kept_home`]): a sensitive read of such a kind, or a
    /// read of a stored secret.
    pub fn kept_home(&self) -> Option<Sensitive> {
        match self {
            Effect::SensitiveRead { category, .. } if category.kept_home() => Some(*category),
            Effect::SecretsRead { .. } => Some(Sensitive::Secrets),
            _ => None,
        }
    }

    pub fn kind(&self) -> EffectKind {
        use Effect::*;
        match self {
            FsRead { .. } => EffectKind::FsRead,
            FsWrite { .. } => EffectKind::FsWrite,
            FsDelete { .. } => EffectKind::FsDelete,
            ProcessExec { .. } => EffectKind::ProcessExec,
            NetFetch { .. } => EffectKind::NetFetch,
            BrowserNavigate { .. } => EffectKind::BrowserNavigate,
            BrowserAct { .. } => EffectKind::BrowserAct,
            MailRead { .. } => EffectKind::MailRead,
            MailSend { .. } => EffectKind::MailSend,
            CalendarRead { .. } => EffectKind::CalendarRead,
            CalendarWrite { .. } => EffectKind::CalendarWrite,
            VaultRead => EffectKind::VaultRead,
            VaultWrite => EffectKind::VaultWrite,
            TasksRead => EffectKind::TasksRead,
            TasksWrite => EffectKind::TasksWrite,
            NotesWrite => EffectKind::NotesWrite,
            AudioCapture => EffectKind::AudioCapture,
            AudioPlay => EffectKind::AudioPlay,
            SecretsRead { .. } => EffectKind::SecretsRead,
            SensitiveRead { .. } => EffectKind::SensitiveRead,
            SystemRead => EffectKind::SystemRead,
            UiAsk => EffectKind::UiAsk,
            ServiceRead { .. } => EffectKind::ServiceRead,
            ServiceWrite { .. } => EffectKind::ServiceWrite,
            ServiceDelete { .. } => EffectKind::ServiceDelete,
            MessageSend { .. } => EffectKind::MessageSend,
            DataShare { .. } => EffectKind::DataShare,
            MoneyPay { .. } => EffectKind::MoneyPay,
            AccountChange { .. } => EffectKind::AccountChange,
            McpCall { .. } => EffectKind::McpCall,
            McpUnconfined { .. } => EffectKind::McpUnconfined,
            ModelSample { .. } => EffectKind::ModelSample,
        }
    }

    pub fn is_read_only(&self) -> bool {
        self.kind().is_read_only()
    }

    /// Reaches people or code outside the machine: an event with attendees is mailed to them.
    pub fn is_egress(&self) -> bool {
        match self {
            Effect::CalendarWrite { attendees, .. } => !attendees.is_empty(),
            other => other.kind().is_egress(),
        }
    }

    /// What untrusted content must not steer without the person seeing it: egress, and changes
    /// to the person's records that Cowork cannot undo (a calendar, a service's data, an
    /// account). Workspace files are journaled (undoable), so edits there are not in it.
    pub fn is_steerable_harm(&self) -> bool {
        let class = self.kind().class();
        self.is_egress() || (class.access == Access::Acts && class.undo == Undo::Lasting)
    }

    /// Where this effect reaches, when that is the whole of its harm: the people a message or a
    /// share goes to, the payee and amount of a payment, the site a request or a page load
    /// reaches, the command run. Whoever chose these values chose the harm, so the PolicyBridge asks where they came
    /// from (see `cowork_core::policy::provenance`). `None` when the harm lies in content the
    /// effect does not name — what a calendar entry says, how an account or a service's data is
    /// changed, what an undeclared tool does: then every argument of the call counts.
    pub fn aim(&self) -> Option<Vec<&str>> {
        use Effect::*;
        let aim: Vec<&str> = match self {
            MailSend { recipients, .. }
            | MessageSend { recipients, .. }
            | DataShare { recipients, .. } => recipients.iter().map(String::as_str).collect(),
            MoneyPay { payee, amount } => std::iter::once(payee.as_str())
                .chain(amount.as_deref())
                .collect(),
            // What a page is made to do (typing, clicking) is content: not its origin.
            NetFetch { origin } | BrowserNavigate { origin } => vec![origin],
            ProcessExec { command, .. } => vec![command],
            _ => return None,
        };
        // Empty when it reaches nobody (a mail's empty cc): nothing there to steer.
        Some(aim)
    }

    /// The strings a rule specifier is matched against (`read_file(~/Documents/**)` matches the
    /// path, `email_send(*@corp.com)` each recipient). Empty when the effect has no argument.
    pub fn subjects(&self) -> Vec<&str> {
        use Effect::*;
        match self {
            FsRead { path } | FsWrite { path } | FsDelete { path } => vec![path],
            ProcessExec { command, .. } => vec![command],
            NetFetch { origin } | BrowserNavigate { origin } | BrowserAct { origin } => {
                vec![origin]
            }
            MailRead { account } => vec![account],
            MailSend { recipients, .. } => recipients.iter().map(String::as_str).collect(),
            CalendarRead { calendar } => vec![calendar],
            CalendarWrite {
                calendar,
                attendees,
            } => std::iter::once(calendar)
                .chain(attendees)
                .map(String::as_str)
                .collect(),
            SecretsRead { name } => vec![name],
            SensitiveRead { subject, .. } => vec![subject],
            ServiceRead { service } => vec![service],
            // A rule names what is changed (`update_file(report.xlsx)`), paid to whom, or
            // reached (`send_channel_message(#general)`).
            ServiceWrite { what, .. } | ServiceDelete { what, .. } | AccountChange { what, .. } => {
                vec![what]
            }
            MessageSend { recipients, .. } | DataShare { recipients, .. } => {
                recipients.iter().map(String::as_str).collect()
            }
            MoneyPay { payee, .. } => vec![payee],
            McpCall { tool, .. } => vec![tool],
            McpUnconfined { server, .. } | ModelSample { server, .. } => vec![server],
            VaultRead | VaultWrite | TasksRead | TasksWrite | NotesWrite | AudioCapture
            | AudioPlay | SystemRead | UiAsk => vec![],
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind().as_str();
        match self {
            Effect::MailSend {
                account,
                recipients,
            } => {
                write!(f, "{kind}({account} → {})", recipients.join(", "))
            }
            Effect::McpCall { server, tool, .. } => write!(f, "{kind}({server}/{tool})"),
            Effect::MessageSend {
                service,
                recipients,
            }
            | Effect::DataShare {
                service,
                recipients,
            } => write!(f, "{kind}({service} → {})", recipients.join(", ")),
            Effect::ServiceWrite { service, what }
            | Effect::ServiceDelete { service, what }
            | Effect::AccountChange { service, what } => write!(f, "{kind}({service}: {what})"),
            Effect::MoneyPay {
                payee,
                amount: Some(amount),
            } => write!(f, "{kind}({amount} → {payee})"),
            Effect::CalendarWrite {
                calendar,
                attendees,
            } if !attendees.is_empty() => {
                write!(f, "{kind}({calendar} → {})", attendees.join(", "))
            }
            other => match other.subjects().first() {
                Some(subject) => write!(f, "{kind}({subject})"),
                None => f.write_str(kind),
            },
        }
    }
}

impl fmt::Display for EffectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_serialize_with_dotted_kind_names() {
        let e = Effect::MailSend {
            account: "work".into(),
            recipients: vec!["a@x.com".into()],
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["kind"], "mail.send");
        assert_eq!(serde_json::from_value::<Effect>(v).unwrap(), e);
        assert_eq!(e.to_string(), "mail.send(work → a@x.com)");
        assert_eq!(Effect::TasksWrite.to_string(), "tasks.write");
        assert_eq!(
            serde_json::to_value(EffectKind::ProcessExec).unwrap(),
            serde_json::json!("process.exec")
        );
    }

    #[test]
    fn the_table_names_each_kind_once_as_serde_does() {
        let mut names = std::collections::BTreeSet::new();
        for kind in EffectKind::ALL {
            assert!(names.insert(kind.as_str()), "{kind:?} repeats a name");
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
            // What only looks reaches nothing outside and changes nothing lasting.
            if kind.is_read_only() {
                assert!(!kind.is_egress() && !kind.is_high_risk(), "{kind:?}");
            }
        }
    }

    /// An effect of `kind` with every field filled, found from serde's own complaints so a new
    /// kind needs no entry here.
    fn filled(kind: EffectKind) -> Effect {
        let mut value = serde_json::json!({ "kind": kind.as_str() });
        let mut last = String::new();
        for _ in 0..16 {
            let error = match serde_json::from_value::<Effect>(value.clone()) {
                Ok(effect) => return effect,
                Err(e) => e.to_string(),
            };
            let field = |marker: &str| {
                let rest = error.split(marker).nth(1)?;
                Some(rest.split('`').next()?.to_string())
            };
            if let Some(name) = field("missing field `") {
                value[&name] = serde_json::json!("subject");
                last = name;
            } else if error.contains("expected a sequence") {
                value[&last] = serde_json::json!(["subject"]);
            } else if let Some(variant) = field("expected one of `") {
                value[&last] = serde_json::json!(variant);
            } else {
                panic!("{kind:?}: {error}");
            }
        }
        panic!("{kind:?}: too many fields")
    }

    #[test]
    fn what_a_rule_matches_is_the_subject_the_table_names() {
        for kind in EffectKind::ALL {
            let effect = filled(*kind);
            let subjects = effect.subjects();
            match kind.class().subject {
                Subject::Nothing => assert!(subjects.is_empty(), "{kind:?}: {subjects:?}"),
                _ => assert!(subjects.contains(&"subject"), "{kind:?}: {subjects:?}"),
            }
        }
    }
}
