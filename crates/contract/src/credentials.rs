//! Where credentials live in a home folder: one list for everything that must keep them out of
//! reach (the policy's protected paths, the MCP sandbox's hidden folders).

/// Folders, directly in a home folder, whose whole content is keys, tokens or logins.
pub const HOME_FOLDERS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".gcloud",
    ".config/gh",
    ".config/gcloud",
    ".local/share/keyrings",
];

/// Files, directly in a home folder, that hold tokens or passwords.
pub const HOME_FILES: &[&str] = &[".netrc", ".git-credentials", ".pypirc", ".npmrc"];
