//! No new Unix sockets for a sandboxed server. Landlock (up to ABI 7) does not check the
//! connection to a socket by its path, so a server could otherwise reach the Docker daemon
//! (`/run/docker.sock`, root on the machine) or the user's session bus past its sandbox. A
//! seccomp filter refuses `socket(AF_UNIX, …)` with EACCES; `socketpair`, which runtimes use
//! for their own children's pipes, stays open, as do other address families (the network
//! namespace and Landlock decide those).

use std::io;

#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// System calls numbered from here on x86-64 are the x32 ABI's, with numbers of their own:
/// refused, so that `socket` cannot be reached under another number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const fn statement(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

const LOAD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const EQUALS: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const AT_LEAST: u32 = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
const RETURN: u32 = libc::BPF_RET | libc::BPF_K;

/// Offsets in `struct seccomp_data`: the call's number, the ABI, the first argument's low
/// half (little-endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0: u32 = 16;

/// The filter; jumps count the statements they skip.
static FILTER: [libc::sock_filter; 9] = [
    statement(LOAD, ARCH),
    jump(EQUALS, NATIVE_ARCH, 0, 6), // a foreign ABI: refused (to 8)
    statement(LOAD, NR),
    jump(AT_LEAST, X32_SYSCALL_BIT, 4, 0), // x32: refused (to 8)
    jump(EQUALS, libc::SYS_socket as u32, 0, 2), // not socket: allowed (to 7)
    statement(LOAD, ARG0),
    jump(EQUALS, libc::AF_UNIX as u32, 1, 0), // AF_UNIX: refused (to 8)
    statement(RETURN, libc::SECCOMP_RET_ALLOW),
    statement(RETURN, libc::SECCOMP_RET_ERRNO | libc::EACCES as u32),
];

/// Installs the filter on the calling thread; after `no_new_privs`. System calls only.
pub(super) fn refuse_new_unix_sockets() -> io::Result<()> {
    let program = libc::sock_fprog {
        len: FILTER.len() as u16,
        filter: FILTER.as_ptr().cast_mut(),
    };
    // SAFETY: `program` points at a static filter the kernel copies during the call.
    let installed = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &program as *const libc::sock_fprog,
        )
    };
    match installed {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}
