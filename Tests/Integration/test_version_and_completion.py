"""`latchkey --version` prints the version the Latchkey module holds, and the shell
completion scripts swift-argument-parser generates work: bash's is loaded into a real bash
and asked for completions the way bash asks (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT)."""

from __future__ import annotations

import re
import subprocess

import pytest

from support import REPO

VERSION_SOURCE = REPO / "Sources" / "Latchkey" / "LatchkeyVersion.swift"
SUBCOMMANDS = ["serve", "check", "login", "login-link", "logout", "status", "token", "use"]


def test_version_prints_the_modules_constant(latchkey):
    [version] = re.findall(r'static let current = "([^"]+)"', VERSION_SOURCE.read_text())
    result = latchkey.run(["--version"])
    assert (result.returncode, result.stdout, result.stderr) == (0, f"latchkey {version}\n", "")


def bash(latchkey_bin, script: str) -> subprocess.CompletedProcess:
    """`script` in a non-interactive bash (no bash-completion package needed) after loading
    latchkey's completion script as the README says."""
    return subprocess.run(["bash", "-c", f"source <('{latchkey_bin}' --generate-completion-script bash)\n{script}"],
                          capture_output=True, text=True, timeout=30)


def complete(latchkey_bin, line: str) -> list[str]:
    """What bash's completion of `line` (the cursor at its end) offers."""
    words = line.split(" ")
    script = f"""COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}
COMP_LINE={line!r}; COMP_POINT={len(line)}
function=$(complete -p latchkey | sed -n 's/.* -F \\([^ ]*\\) .*/\\1/p')
"$function" latchkey {words[-1]!r} {words[-2]!r}
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    result = bash(latchkey_bin, script)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_bash_completion_script_loads(latchkey_bin):
    result = bash(latchkey_bin, "complete -p latchkey")
    assert result.returncode == 0 and re.fullmatch(r"complete .*-F \S+ latchkey\n", result.stdout), result


def test_bash_completes_subcommands_and_options(latchkey_bin):
    offered = complete(latchkey_bin, "latchkey ")
    assert set(SUBCOMMANDS) <= set(offered), offered
    assert complete(latchkey_bin, "latchkey se") == ["serve"]
    assert "--config" in complete(latchkey_bin, "latchkey check --con")
    assert "--skip-secrets" in complete(latchkey_bin, "latchkey check --s")


@pytest.mark.parametrize("shell,marker", [("zsh", "#compdef latchkey"), ("fish", "complete -c 'latchkey'")])
def test_zsh_and_fish_scripts_are_generated(latchkey, shell, marker):
    result = latchkey.run(["--generate-completion-script", shell])
    assert result.returncode == 0 and marker in result.stdout
    assert all(name in result.stdout for name in SUBCOMMANDS)
