//! The host and this process's place on it: the host's name, system and release, the CPU's
//! model, the parent process (and whether it is `cargo`), and whether address-space
//! randomisation was turned off for this process.

/// The host's name, the system's name and its release (`uname` on Unix; on Windows the
/// computer's name, "Windows" and the version `RtlGetVersion` reports). Empty when unknown.
#[cfg(unix)]
pub fn uname() -> (String, String, String) {
    // SAFETY: utsname is plain old data; uname fills it and NUL-terminates each field.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return (String::new(), String::new(), String::new());
        }
        let f = |p: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(p.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        (f(&u.nodename), f(&u.sysname), f(&u.release))
    }
}

#[cfg(windows)]
pub fn uname() -> (String, String, String) {
    use windows_sys::Wdk::System::SystemServices::RtlGetVersion;
    use windows_sys::Win32::System::SystemInformation::OSVERSIONINFOW;
    let host = std::env::var("COMPUTERNAME").unwrap_or_default();
    // SAFETY: a zeroed OSVERSIONINFOW with its size set is what RtlGetVersion fills.
    let release = unsafe {
        let mut v: OSVERSIONINFOW = std::mem::zeroed();
        v.dwOSVersionInfoSize = std::mem::size_of::<OSVERSIONINFOW>() as u32;
        if RtlGetVersion(&mut v) == 0 {
            format!(
                "{}.{}.{}",
                v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber
            )
        } else {
            String::new()
        }
    };
    let release = match wine_version() {
        Some(wine) => format!("{release} (Wine {wine})"),
        None => release,
    };
    (host, "Windows".into(), release)
}

/// The version of Wine when this Windows program runs under it (its `ntdll` exports
/// `wine_get_version`), which implements some figures differently: it keeps no page-fault
/// count, for one.
#[cfg(windows)]
pub fn wine_version() -> Option<String> {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
    // SAFETY: NUL-terminated names; ntdll is always loaded; the function, when present, takes
    // nothing and returns a static NUL-terminated string.
    unsafe {
        let ntdll = GetModuleHandleA(c"ntdll.dll".as_ptr().cast());
        if ntdll.is_null() {
            return None;
        }
        let f = GetProcAddress(ntdll, c"wine_get_version".as_ptr().cast())?;
        let f: unsafe extern "C" fn() -> *const std::ffi::c_char = std::mem::transmute(f);
        let v = f();
        (!v.is_null()).then(|| std::ffi::CStr::from_ptr(v).to_string_lossy().into_owned())
    }
}

#[cfg(unix)]
pub fn wine_version() -> Option<String> {
    None
}

/// The CPU's model name: `/proc/cpuinfo` on Linux, `machdep.cpu.brand_string` on macOS,
/// CPUID's brand string on x86-64 Windows; "unknown" otherwise.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(target_os = "macos")]
pub fn cpu_model() -> String {
    let mut buf = [0u8; 256];
    let mut len = buf.len();
    // SAFETY: a NUL-terminated name; `buf` and `len` describe a writable buffer of `len` bytes.
    let rc = unsafe {
        libc::sysctlbyname(
            c"machdep.cpu.brand_string".as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return "unknown".into();
    }
    let s = String::from_utf8_lossy(&buf[..len.min(buf.len())]);
    s.trim_end_matches('\0').trim().to_string()
}

#[cfg(all(windows, target_arch = "x86_64"))]
pub fn cpu_model() -> String {
    use core::arch::x86_64::__cpuid;
    if __cpuid(0x8000_0000).eax < 0x8000_0004 {
        return "unknown".into();
    }
    let mut bytes = Vec::with_capacity(48);
    for leaf in 0x8000_0002..=0x8000_0004u32 {
        let r = __cpuid(leaf);
        for w in [r.eax, r.ebx, r.ecx, r.edx] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
    }
    let s = String::from_utf8_lossy(&bytes);
    s.trim_end_matches('\0').trim().to_string()
}

#[cfg(all(windows, not(target_arch = "x86_64")))]
pub fn cpu_model() -> String {
    "unknown".into()
}

/// The parent process's id.
#[cfg(unix)]
pub fn parent_id() -> Option<u32> {
    Some(std::os::unix::process::parent_id())
}

/// The parent process's id, from a snapshot of the processes.
#[cfg(windows)]
pub fn parent_id() -> Option<u32> {
    process_entry(std::process::id()).map(|(parent, _)| parent)
}

/// The parent process's id when the parent is `cargo` (`cargo bench` running each bench
/// target in turn).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn cargo_parent() -> Option<u32> {
    let parent = std::os::unix::process::parent_id();
    std::fs::read_to_string(format!("/proc/{parent}/comm"))
        .is_ok_and(|c| c.trim() == "cargo")
        .then_some(parent)
}

#[cfg(target_os = "macos")]
pub fn cargo_parent() -> Option<u32> {
    let parent = std::os::unix::process::parent_id();
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for the size given; proc_name writes at most that many bytes.
    let n = unsafe { libc::proc_name(parent as i32, buf.as_mut_ptr().cast(), buf.len() as u32) };
    (n > 0 && &buf[..n as usize] == b"cargo").then_some(parent)
}

#[cfg(windows)]
pub fn cargo_parent() -> Option<u32> {
    let (parent, _) = process_entry(std::process::id())?;
    let (_, exe) = process_entry(parent)?;
    exe.eq_ignore_ascii_case("cargo.exe").then_some(parent)
}

/// A process's parent id and executable name, from a Toolhelp snapshot.
#[cfg(windows)]
fn process_entry(pid: u32) -> Option<(u32, String)> {
    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W,
        TH32CS_SNAPPROCESS,
    };
    // SAFETY: the snapshot handle is checked and closed; the entry is zeroed with its size set,
    // as Process32FirstW/NextW require.
    unsafe {
        let snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snap == INVALID_HANDLE_VALUE {
            return None;
        }
        let mut e: PROCESSENTRY32W = std::mem::zeroed();
        e.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
        let mut found = None;
        let mut more = Process32FirstW(snap, &mut e) != 0;
        while more {
            if e.th32ProcessID == pid {
                let len = e.szExeFile.iter().position(|&c| c == 0).unwrap_or(0);
                let exe = String::from_utf16_lossy(&e.szExeFile[..len]);
                found = Some((e.th32ParentProcessID, exe));
                break;
            }
            more = Process32NextW(snap, &mut e) != 0;
        }
        CloseHandle(snap);
        found
    }
}

/// Whether address-space randomisation is off for this process: Linux says so in its
/// personality (`ADDR_NO_RANDOMIZE`); macOS and Windows have no query for it (`false`: the
/// default, on).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn aslr_off() -> bool {
    // SAFETY: personality(0xffffffff) only queries.
    let pers = unsafe { libc::personality(0xffff_ffff) };
    pers >= 0 && (pers & libc::ADDR_NO_RANDOMIZE) != 0
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn aslr_off() -> bool {
    false
}
