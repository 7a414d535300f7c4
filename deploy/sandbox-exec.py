#!/usr/bin/python3
"""Runs a command under the seccomp rules a systemd unit asks for, without systemd.

Usage: sandbox-exec.py UNIT-FILE -- COMMAND [ARG...]

deploy/test-systemd.sh uses it to run thumbd under thumbd.service's SystemCallFilter,
SystemCallArchitectures=native, RestrictAddressFamilies and MemoryDenyWriteExecute where systemd
is not PID 1 (so systemd-run cannot). It builds the filters the way systemd does (a stack of
seccomp filters; the kernel applies the strictest answer), with one difference on purpose: a
system call outside the allow list kills the process (SIGSYS) whatever the unit's
SystemCallErrorNumber says, so a filtered call in the exercised paths cannot go unnoticed.
Needs python3-seccomp (Debian), so /usr/bin/python3.
"""

import errno
import os
import re
import socket
import subprocess
import sys

import seccomp

PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000


def unit_values(path, key):
    """Every value of KEY= in the unit's [Service] section, in order."""
    values, section = [], None
    for raw in open(path, encoding="utf-8"):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]" and line.split("=", 1)[0].strip() == key:
            values.append(line.split("=", 1)[1].strip())
    return values


def expand(names, seen=None):
    """Syscall names of a SystemCallFilter list, groups (@name) expanded by systemd-analyze."""
    seen = set() if seen is None else seen
    out = set()
    for name in names:
        if not name.startswith("@"):
            out.add(name)
            continue
        if name in seen:
            continue
        seen.add(name)
        listing = subprocess.run(
            ["systemd-analyze", "syscall-filter", name], check=True, capture_output=True, text=True
        ).stdout
        members = [l.strip() for l in listing.splitlines()[1:] if l.strip() and not l.strip().startswith("#")]
        out |= expand(members, seen)
    return out


def allowed_syscalls(unit):
    allowed, denied = None, set()
    for value in unit_values(unit, "SystemCallFilter"):
        if value.startswith("~"):
            denied |= expand(value[1:].split())
        else:
            names = expand(value.split())
            allowed = names if allowed is None else allowed | names
    if allowed is None:
        sys.exit("sandbox-exec: the unit has no SystemCallFilter allow list")
    return allowed - denied


def resolvable(name):
    """Whether NAME is a system call of this architecture (groups list every architecture's)."""
    try:
        return seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0
    except (ValueError, RuntimeError):
        return False


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    unit, command = sys.argv[1], sys.argv[3:]

    # Filter 1 (default allow): RestrictAddressFamilies= and MemoryDenyWriteExecute=.
    restrictions = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    families = " ".join(unit_values(unit, "RestrictAddressFamilies")).split()
    if families:
        allowed = sorted(int(getattr(socket, f)) for f in families)
        refuse = seccomp.ERRNO(errno.EAFNOSUPPORT)
        for family in range(0, allowed[-1]):
            if family not in allowed:
                restrictions.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.EQ, family))
        restrictions.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.GT, allowed[-1]))
    if unit_values(unit, "MemoryDenyWriteExecute")[-1:] == ["yes"]:
        eperm = seccomp.ERRNO(errno.EPERM)
        wx = PROT_WRITE | PROT_EXEC
        restrictions.add_rule(eperm, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, wx, wx))
        restrictions.add_rule(eperm, "mprotect", seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        restrictions.add_rule(eperm, "pkey_mprotect", seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        restrictions.add_rule(eperm, "shmat", seccomp.Arg(2, seccomp.MASKED_EQ, SHM_EXEC, SHM_EXEC))
    restrictions.load()

    # Filter 2 (default: kill the process): the SystemCallFilter= allow list. Loaded last, as the
    # seccomp() call that loads it is not in every allow list. Other architectures: killed too
    # (SystemCallArchitectures=native; libseccomp's default bad-arch action).
    allow_list = seccomp.SyscallFilter(defaction=seccomp.KILL_PROCESS)
    names = sorted(n for n in allowed_syscalls(unit) if resolvable(n))
    for name in names:
        allow_list.add_rule(seccomp.ALLOW, name)
    print(f"sandbox-exec: {len(names)} system calls allowed, families {' '.join(families)}", file=sys.stderr)
    allow_list.load()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
