use crate::PersonalTools;
use cowork_contract::{ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

#[derive(Serialize, JsonSchema)]
pub struct Disk {
    pub mount_point: String,
    pub file_system: String,
    pub total_bytes: u64,
    pub available_bytes: u64,
}

#[derive(Serialize, JsonSchema)]
pub struct SystemInfo {
    pub os: String,
    pub os_version: Option<String>,
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    pub cpu_brand: String,
    pub cpu_cores: usize,
    pub memory_total_bytes: u64,
    pub memory_used_bytes: u64,
    pub uptime_seconds: u64,
    pub disks: Vec<Disk>,
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn get_system_info_text(s: &SystemInfo) -> String {
    let mut lines = vec![
        format!(
            "{} {} (kernel {})",
            s.os,
            s.os_version.as_deref().unwrap_or(""),
            s.kernel.as_deref().unwrap_or("?")
        ),
        format!(
            "CPU: {} × {}",
            s.cpu_cores,
            if s.cpu_brand.is_empty() {
                "unknown"
            } else {
                &s.cpu_brand
            }
        ),
        format!(
            "Memory: {} used of {}",
            gib(s.memory_used_bytes),
            gib(s.memory_total_bytes)
        ),
        format!(
            "Uptime: {} h {} min",
            s.uptime_seconds / 3600,
            s.uptime_seconds % 3600 / 60
        ),
    ];
    for d in &s.disks {
        lines.push(format!(
            "Disk {}: {} free of {}",
            d.mount_point,
            gib(d.available_bytes),
            gib(d.total_bytes)
        ));
    }
    lines.join("\n")
}

#[tools(list = system_tools)]
impl PersonalTools {
    #[tool(name = "get_system_info", title = "System info", category = "system",
           effects = [SystemRead], read_only, idempotent,
           description = "Operating system, CPU, memory, disks and uptime of this computer.",
           text = get_system_info_text)]
    async fn get_system_info(&self, _input: &NoInput) -> ToolResult<SystemInfo> {
        use sysinfo::{CpuRefreshKind, Disks, MemoryRefreshKind, RefreshKind, System};
        let unreadable =
            |what: &str, e: sysinfo::Error| ToolError::failed(format!("cannot read {what}: {e}"));
        let sys = System::new_with_specifics(
            RefreshKind::nothing()
                .with_memory(MemoryRefreshKind::everything())
                .with_cpu(CpuRefreshKind::nothing()),
        )
        .map_err(|e| unreadable("memory and CPU information", e))?;
        let disks = Disks::new_with_refreshed_list().map_err(|e| unreadable("the disk list", e))?;
        let disks = disks
            .iter()
            .filter(|d| d.total_space() > 0)
            .map(|d| Disk {
                mount_point: d.mount_point().display().to_string(),
                file_system: d.file_system().to_string_lossy().into_owned(),
                total_bytes: d.total_space(),
                available_bytes: d.available_space(),
            })
            .collect();
        Ok(SystemInfo {
            os: System::name().unwrap_or_else(|_| std::env::consts::OS.to_string()),
            os_version: System::os_version().ok(),
            kernel: System::kernel_version().ok(),
            hostname: System::host_name().ok(),
            cpu_brand: sys
                .cpus()
                .first()
                .map(|c| c.brand().trim().to_string())
                .unwrap_or_default(),
            cpu_cores: sys.cpus().len(),
            memory_total_bytes: sys.total_memory(),
            memory_used_bytes: sys.used_memory(),
            uptime_seconds: System::uptime().unwrap_or_default(),
            disks,
        })
    }
}
