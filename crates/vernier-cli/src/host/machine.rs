//! Facts about the machine, read through a [`SysRoot`]: CPUs, vendor and model, frequency
//! scaling, boost interface, SMT siblings, IRQs, the kernel command line, virtualisation.
//! Pure reads; the audit judges them and tuning changes them.

use super::cpulist::CpuSet;
use super::root::SysRoot;

pub const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The CPU maker, which decides where the boost switch lives and how the model is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Intel,
    Amd,
    Arm,
    Other,
}

impl Vendor {
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Intel => "Intel",
            Vendor::Amd => "AMD",
            Vendor::Arm => "ARM",
            Vendor::Other => "unknown",
        }
    }
}

/// Vendor and model from `/proc/cpuinfo`.
#[derive(Debug, Clone)]
pub struct CpuModel {
    pub vendor: Vendor,
    /// What the vendor field said (`GenuineIntel`, `AuthenticAMD`, implementer `0x41`, …).
    pub vendor_raw: String,
    pub model: String,
}

pub fn cpu_model(root: &SysRoot) -> Option<CpuModel> {
    let info = root.read_raw("/proc/cpuinfo")?;
    let field = |name: &str| -> Option<String> {
        info.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_string())
        })
    };
    if let Some(v) = field("vendor_id") {
        let vendor = match v.as_str() {
            "GenuineIntel" => Vendor::Intel,
            "AuthenticAMD" | "HygonGenuine" => Vendor::Amd,
            _ => Vendor::Other,
        };
        let model = field("model name").unwrap_or_else(|| "unknown model".into());
        return Some(CpuModel {
            vendor,
            vendor_raw: v,
            model,
        });
    }
    if let Some(imp) = field("CPU implementer") {
        let part = field("CPU part").unwrap_or_default();
        let model = field("model name")
            .filter(|m| !m.is_empty())
            .or_else(|| arm_part_name(&imp, &part).map(str::to_string))
            .unwrap_or_else(|| format!("implementer {imp} part {part}"));
        return Some(CpuModel {
            vendor: Vendor::Arm,
            vendor_raw: format!("{} ({imp})", arm_implementer_name(&imp)),
            model,
        });
    }
    Some(CpuModel {
        vendor: Vendor::Other,
        vendor_raw: "unknown".into(),
        model: field("model name")
            .or_else(|| field("cpu model"))
            .unwrap_or_else(|| "unknown model".into()),
    })
}

/// One kind of core on a machine that has several (Arm's big and little cores): its model,
/// its capacity (`cpuN/cpu_capacity`, 1024 for the fastest) and its CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreKind {
    pub model: String,
    pub capacity: Option<u64>,
    pub cpus: CpuSet,
}

/// The kinds of the online cores, fastest first, told apart by their capacity
/// (`cpuN/cpu_capacity`) and their part (`CPU part` of their `/proc/cpuinfo` block). One kind
/// on a machine whose cores are alike, and on x86-64 (neither file says otherwise).
pub fn core_kinds(root: &SysRoot, online: &CpuSet) -> Vec<CoreKind> {
    let info = root.read_raw("/proc/cpuinfo").unwrap_or_default();
    // Each `processor : N` block's implementer and part.
    let mut parts: std::collections::HashMap<usize, (String, String)> = Default::default();
    for block in info.split("\n\n") {
        let field = |name: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
        };
        if let (Some(cpu), Some(part)) = (
            field("processor").and_then(|c| c.parse().ok()),
            field("CPU part"),
        ) {
            parts.insert(cpu, (field("CPU implementer").unwrap_or_default(), part));
        }
    }
    let mut kinds: Vec<CoreKind> = Vec::new();
    for cpu in online.iter() {
        let capacity = root.read_num(&format!("{CPU_DIR}/cpu{cpu}/cpu_capacity"));
        let model = parts.get(&cpu).map_or_else(String::new, |(imp, part)| {
            arm_part_name(imp, part)
                .map_or_else(|| format!("implementer {imp} part {part}"), str::to_string)
        });
        match kinds
            .iter_mut()
            .find(|k| k.model == model && k.capacity == capacity)
        {
            Some(k) => k.cpus = k.cpus.union(&[cpu].into_iter().collect()),
            None => kinds.push(CoreKind {
                model,
                capacity,
                cpus: [cpu].into_iter().collect(),
            }),
        }
    }
    kinds.sort_by_key(|k| std::cmp::Reverse(k.capacity.unwrap_or(0)));
    kinds
}

fn arm_implementer_name(imp: &str) -> &'static str {
    match imp.to_ascii_lowercase().as_str() {
        "0x41" => "Arm",
        "0x42" => "Broadcom",
        "0x46" => "Fujitsu",
        "0x48" => "HiSilicon",
        "0x4e" => "NVIDIA",
        "0x51" => "Qualcomm",
        "0x61" => "Apple",
        "0xc0" => "Ampere",
        _ => "unknown implementer",
    }
}

fn arm_part_name(imp: &str, part: &str) -> Option<&'static str> {
    if !imp.eq_ignore_ascii_case("0x41") {
        return None;
    }
    Some(match part.to_ascii_lowercase().as_str() {
        "0xd03" => "Cortex-A53",
        "0xd05" => "Cortex-A55",
        "0xd07" => "Cortex-A57",
        "0xd08" => "Cortex-A72",
        "0xd0b" => "Cortex-A76",
        "0xd0c" => "Neoverse-N1",
        "0xd0d" => "Cortex-A77",
        "0xd40" => "Neoverse-V1",
        "0xd41" => "Cortex-A78",
        "0xd44" => "Cortex-X1",
        "0xd46" => "Cortex-A510",
        "0xd47" => "Cortex-A710",
        "0xd48" => "Cortex-X2",
        "0xd4d" => "Cortex-A715",
        "0xd4e" => "Cortex-X3",
        "0xd80" => "Cortex-A520",
        "0xd81" => "Cortex-A720",
        "0xd82" => "Cortex-X4",
        "0xd49" => "Neoverse-N2",
        "0xd4f" => "Neoverse-V2",
        _ => return None,
    })
}

/// Online CPUs: `/sys/devices/system/cpu/online`, else the `cpuN` directories.
pub fn online_cpus(root: &SysRoot) -> CpuSet {
    if let Some(s) = root.read(&format!("{CPU_DIR}/online")) {
        if let Ok(set) = CpuSet::parse_list(&s) {
            if !set.is_empty() {
                return set;
            }
        }
    }
    root.list(CPU_DIR)
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
        .collect()
}

/// `isolcpus`: the sysfs view if present, else the command line.
pub fn isolated_cpus(root: &SysRoot) -> Option<CpuSet> {
    if let Some(s) = root.read(&format!("{CPU_DIR}/isolated")) {
        return CpuSet::parse_list(&s).ok();
    }
    cmdline_param(root, "isolcpus").and_then(|v| CpuSet::parse_list(&v).ok())
}

/// The kernel command line as `key[=value]` words, up to `--` (what follows goes to init).
pub fn cmdline(root: &SysRoot) -> Option<Vec<String>> {
    let line = root.read("/proc/cmdline")?;
    Some(
        line.split_whitespace()
            .take_while(|w| *w != "--")
            .map(str::to_string)
            .collect(),
    )
}

/// The value of `key=` on the kernel command line (the last one wins, as in the kernel).
pub fn cmdline_param(root: &SysRoot, key: &str) -> Option<String> {
    cmdline(root)?
        .iter()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v.to_string())
        .next_back()
}

/// The SMT siblings of `cpu` (itself included), from its topology.
pub fn thread_siblings(root: &SysRoot, cpu: usize) -> Option<CpuSet> {
    root.read(&format!("{CPU_DIR}/cpu{cpu}/topology/thread_siblings_list"))
        .and_then(|s| CpuSet::parse_list(&s).ok())
}

/// The CPUs benchmarks will use: the explicit list, else the isolated CPUs, else the last
/// online CPU (the one least likely to take IRQs and housekeeping by default).
pub fn benchmark_cpus(root: &SysRoot, explicit: Option<&CpuSet>) -> (CpuSet, &'static str) {
    if let Some(c) = explicit {
        return (c.clone(), "chosen with --cpus");
    }
    if let Some(iso) = isolated_cpus(root).filter(|s| !s.is_empty()) {
        return (iso, "the isolated CPUs");
    }
    let online = online_cpus(root);
    match online.iter().last() {
        Some(last) => ([last].into_iter().collect(), "the last online CPU"),
        None => (CpuSet::new(), "no CPU found"),
    }
}

/// The CPUs to isolate for `bench`: the benchmark CPUs with their SMT siblings, so a
/// sibling thread never runs other work on the same core.
pub fn isolation_set(root: &SysRoot, bench: &CpuSet) -> CpuSet {
    let mut set = bench.clone();
    for c in bench.iter() {
        if let Some(s) = thread_siblings(root, c) {
            set = set.union(&s);
        }
    }
    set
}

/// Frequency scaling of one CPU (`cpuN/cpufreq`), values in kHz as the kernel gives them.
#[derive(Debug, Clone)]
pub struct CpuFreq {
    pub cpu: usize,
    pub driver: Option<String>,
    pub governor: Option<String>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub hw_min_khz: Option<u64>,
    pub hw_max_khz: Option<u64>,
}

pub fn cpufreq_dir(cpu: usize) -> String {
    format!("{CPU_DIR}/cpu{cpu}/cpufreq")
}

pub fn cpufreq(root: &SysRoot, cpu: usize) -> Option<CpuFreq> {
    let d = cpufreq_dir(cpu);
    if !root.exists(&d) {
        return None;
    }
    Some(CpuFreq {
        cpu,
        driver: root.read(&format!("{d}/scaling_driver")),
        governor: root.read(&format!("{d}/scaling_governor")),
        min_khz: root.read_num(&format!("{d}/scaling_min_freq")),
        max_khz: root.read_num(&format!("{d}/scaling_max_freq")),
        hw_min_khz: root.read_num(&format!("{d}/cpuinfo_min_freq")),
        hw_max_khz: root.read_num(&format!("{d}/cpuinfo_max_freq")),
    })
}

/// Where the turbo/boost switch lives. Intel's `intel_pstate` says "no turbo" (1 = off);
/// `acpi-cpufreq` (AMD, older Intel, some ARM) says "boost" (0 = off), globally or, with
/// `amd-pstate`, per policy.
#[derive(Debug, Clone)]
pub enum BoostSwitch {
    IntelNoTurbo { path: String, value: String },
    CpufreqBoost { path: String, value: String },
    PerPolicy { paths: Vec<(String, String)> },
}

pub const INTEL_NO_TURBO: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";
pub const CPUFREQ_BOOST: &str = "/sys/devices/system/cpu/cpufreq/boost";

pub fn boost_switch(root: &SysRoot) -> Option<BoostSwitch> {
    if let Some(v) = root.read(INTEL_NO_TURBO) {
        return Some(BoostSwitch::IntelNoTurbo {
            path: INTEL_NO_TURBO.into(),
            value: v,
        });
    }
    if let Some(v) = root.read(CPUFREQ_BOOST) {
        return Some(BoostSwitch::CpufreqBoost {
            path: CPUFREQ_BOOST.into(),
            value: v,
        });
    }
    let base = "/sys/devices/system/cpu/cpufreq";
    let paths: Vec<(String, String)> = root
        .list(base)
        .into_iter()
        .filter(|n| n.starts_with("policy"))
        .filter_map(|n| {
            let p = format!("{base}/{n}/boost");
            root.read(&p).map(|v| (p, v))
        })
        .collect();
    (!paths.is_empty()).then_some(BoostSwitch::PerPolicy { paths })
}

impl BoostSwitch {
    /// True when boost is off everywhere.
    pub fn is_off(&self) -> bool {
        match self {
            BoostSwitch::IntelNoTurbo { value, .. } => value == "1",
            BoostSwitch::CpufreqBoost { value, .. } => value == "0",
            BoostSwitch::PerPolicy { paths } => paths.iter().all(|(_, v)| v == "0"),
        }
    }
    /// Each file to write and the value that turns boost off.
    pub fn off_writes(&self) -> Vec<(String, String, &'static str)> {
        match self {
            BoostSwitch::IntelNoTurbo { path, value } => vec![(path.clone(), value.clone(), "1")],
            BoostSwitch::CpufreqBoost { path, value } => vec![(path.clone(), value.clone(), "0")],
            BoostSwitch::PerPolicy { paths } => paths
                .iter()
                .map(|(p, v)| (p.clone(), v.clone(), "0"))
                .collect(),
        }
    }
}

/// One interrupt line: number, name (from `/proc/interrupts`) and affinity mask.
#[derive(Debug, Clone)]
pub struct Irq {
    pub number: u32,
    pub name: String,
    pub mask: String,
    pub cpus: CpuSet,
}

pub fn irqs(root: &SysRoot) -> Vec<Irq> {
    let names = irq_names(root);
    let mut out: Vec<Irq> = root
        .list("/proc/irq")
        .into_iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .filter_map(|n| {
            let mask = root.read(&format!("/proc/irq/{n}/smp_affinity"))?;
            let cpus = CpuSet::parse_mask(&mask).ok()?;
            Some(Irq {
                number: n,
                name: names
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
                mask,
                cpus,
            })
        })
        .collect();
    out.sort_by_key(|i| i.number);
    out
}

fn irq_names(root: &SysRoot) -> Vec<(u32, String)> {
    let Some(text) = root.read_raw("/proc/interrupts") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let (n, rest) = l.trim_start().split_once(':')?;
            let n: u32 = n.trim().parse().ok()?;
            let name = rest
                .split_whitespace()
                .skip_while(|w| w.chars().all(|c| c.is_ascii_digit()))
                .last()
                .unwrap_or("")
                .to_string();
            Some((n, name))
        })
        .collect()
}

/// PIDs of running processes called `name` (from `/proc/<pid>/comm`).
pub fn processes_named(root: &SysRoot, name: &str) -> Vec<u32> {
    root.list("/proc")
        .into_iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .filter(|pid| root.read(&format!("/proc/{pid}/comm")).as_deref() == Some(name))
        .collect()
}

/// What kind of machine this is, as far as timing is concerned.
#[derive(Debug, Clone)]
pub struct Virtualization {
    /// `None` on bare metal.
    pub hypervisor: Option<String>,
    pub container: Option<String>,
    /// A hardware PMU is exposed to perf (cycles and instructions can be counted).
    pub pmu: bool,
    /// This program runs under user-mode emulation ([`emulation_of`]); `None` natively.
    pub emulation: Option<String>,
}

/// The architecture whose CPUs `/proc/cpuinfo` describes: x86's lines (`vendor_id`, `flags`)
/// or Arm's (`CPU implementer`); `None` for another or an empty file.
fn cpuinfo_arch(cpuinfo: &str) -> Option<&'static str> {
    let has = |key: &str| {
        cpuinfo
            .lines()
            .any(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
    };
    if has("CPU implementer") {
        Some("aarch64")
    } else if has("vendor_id") && has("flags") {
        Some("x86_64")
    } else {
        None
    }
}

/// User-mode emulation, said in words, when a program built for `arch` reads a `cpuinfo` of
/// another architecture's CPU: qemu-user translates the program's code and passes the host's
/// own `/proc/cpuinfo` through, so every time it measures is the translation's. `None` when
/// they agree or the file does not say (a system emulator, which emulates the file too, is
/// not told apart from hardware this way).
pub fn emulation_of(cpuinfo: &str, arch: &str) -> Option<String> {
    let cpu = cpuinfo_arch(cpuinfo)?;
    (cpu != arch)
        .then(|| format!("{arch} code on an {cpu} CPU (user-mode emulation, e.g. qemu-user)"))
}

pub fn virtualization(root: &SysRoot) -> Virtualization {
    let cpuinfo = root.read_raw("/proc/cpuinfo").unwrap_or_default();
    let flagged = cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|w| w == "hypervisor"));
    let dmi = format!(
        "{} {}",
        root.read("/sys/class/dmi/id/sys_vendor")
            .unwrap_or_default(),
        root.read("/sys/class/dmi/id/product_name")
            .unwrap_or_default()
    );
    let clocks = root
        .read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
        .unwrap_or_default();
    let named = [
        ("KVM", "KVM"),
        ("QEMU", "QEMU/KVM"),
        ("VMware", "VMware"),
        ("VirtualBox", "VirtualBox"),
        ("innotek", "VirtualBox"),
        ("Xen", "Xen"),
        ("Virtual Machine", "Hyper-V"),
        ("Amazon EC2", "Amazon EC2 (Nitro/KVM)"),
        ("Google Compute Engine", "Google Compute Engine (KVM)"),
    ]
    .iter()
    .find(|(k, _)| dmi.contains(k))
    .map(|(_, v)| v.to_string());
    let hv_type = root.read("/sys/hypervisor/type").filter(|s| !s.is_empty());
    let by_clock = if clocks.split_whitespace().any(|c| c == "kvm-clock") {
        Some("KVM".to_string())
    } else if clocks.contains("hyperv") {
        Some("Hyper-V".to_string())
    } else if clocks.split_whitespace().any(|c| c == "xen") {
        Some("Xen".to_string())
    } else {
        None
    };
    let hypervisor = named
        .or(hv_type.map(|t| format!("{t} (from /sys/hypervisor)")))
        .or(by_clock)
        .or(flagged.then(|| "unknown hypervisor".to_string()));
    let container = if root.exists("/.dockerenv") {
        Some("docker".to_string())
    } else if root.exists("/run/.containerenv") {
        Some("podman".to_string())
    } else {
        None
    };
    let pmu = root
        .list("/sys/bus/event_source/devices")
        .iter()
        .any(|d| d == "cpu" || d == "cpu_core" || d == "cpu_atom" || d.starts_with("armv"));
    Virtualization {
        hypervisor,
        container,
        pmu,
        emulation: emulation_of(&cpuinfo, std::env::consts::ARCH),
    }
}

/// Size in bytes of the largest CPU cache (the last level), from `cpu0/cache/index*`.
pub fn last_level_cache_bytes(root: &SysRoot) -> Option<u64> {
    let base = format!("{CPU_DIR}/cpu0/cache");
    root.list(&base)
        .into_iter()
        .filter(|n| n.starts_with("index"))
        .filter_map(|n| {
            let kind = root.read(&format!("{base}/{n}/type")).unwrap_or_default();
            if kind == "Instruction" {
                return None;
            }
            vernier::workload::cache::parse_size(&root.read(&format!("{base}/{n}/size"))?)
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::emulation_of;

    const X86: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\
                       flags\t\t: fpu vme de pse tsc msr hypervisor\n";
    const ARM: &str = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm\n\
                       CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";

    #[test]
    fn aarch64_code_reading_an_x86_cpuinfo_is_emulated() {
        let e = emulation_of(X86, "aarch64").unwrap();
        assert!(e.contains("aarch64 code on an x86_64 CPU"), "{e}");
        assert!(emulation_of(ARM, "x86_64").is_some());
    }

    #[test]
    fn code_on_its_own_cpu_or_an_unknown_file_is_not() {
        assert_eq!(emulation_of(X86, "x86_64"), None);
        assert_eq!(emulation_of(ARM, "aarch64"), None);
        assert_eq!(emulation_of("", "aarch64"), None);
        assert_eq!(
            emulation_of("processor : 0\nisa : rv64imafdc\n", "aarch64"),
            None
        );
    }
}
