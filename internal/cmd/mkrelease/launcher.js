#!/usr/bin/env node
// majordomus-mcp's npm launcher: starts the binary that npm installed from
// this platform's optional dependency (@majordomus-mcp/<platform>-<arch>),
// with the same arguments, stdio, working directory and environment. Node
// cannot exec, so it stays as the binary's parent: it passes on every
// signal a host ends its server with, ends as the binary did (its exit
// code, or the same signal), and sees its host go (below). Putting the
// binary in this file's place at install (esbuild's postinstall) would
// take node out of the tree, but not npm's shell, and only where install
// scripts run (pnpm and --ignore-scripts skip them); most of what npx
// adds to a start is npm's own.
"use strict";
const { spawn, execFileSync } = require("child_process");
const fs = require("fs");

const pkg = `@majordomus-mcp/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "majordomus-mcp.exe" : "majordomus-mcp";

let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch (err) {
  process.stderr.write(
    `majordomus-mcp: no binary for ${process.platform}-${process.arch}: ${pkg} is not installed: ` +
      `npm could not fetch it from ${registry()}, or was told to leave optional dependencies out ` +
      `(--omit=optional); majordomus-mcp ships for linux, darwin and win32 on x64 and arm64\n`,
  );
  process.exit(1);
}

// registry is npm's: npm tells a script when it is not the default one.
function registry() {
  if (process.env.npm_lifecycle_event) return process.env.npm_config_registry || "https://registry.npmjs.org/";
  try {
    const opts = { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], shell: process.platform === "win32" };
    return execFileSync("npm", ["config", "get", "registry"], opts).trim();
  } catch {
    return "npm's registry";
  }
}


// On Windows a console's Ctrl-C and Ctrl-Break reach every process on it,
// the binary too, which removes its lease and ends: passed on, they would
// end it first (libuv kills with TerminateProcess for SIGINT), so the
// launcher only keeps from ending before it, and then ends as it did.
const windows = process.platform === "win32";
const forwarded = windows ? ["SIGINT", "SIGBREAK"] : ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const sig of forwarded) {
  process.on(sig, () => {
    if (windows) return;
    try {
      child.kill(sig);
    } catch {}
  });
}

// The host's child is npx (npm), which runs this launcher through a shell
// (`sh -c`, cmd.exe on Windows) unless the shell execs it (bash does). The
// binary watches its own parent, this launcher; the launcher watches what
// stands between it and the host, and the host:
// - its parent (the shell, npm, or the host itself) ends: on Unix the
//   shell ends when npm passes a SIGTERM on to it, so the binary is ended
//   as the host meant (SIGTERM), and removes its lease before it dies; on
//   Windows cmd.exe ends with npm (npm's job ends it), and the launcher
//   ends: Windows ends the binary with it (its job), as a hard kill would;
// - npm ends while the shell lives (npm killed hard, SIGKILL), or the host
//   ends while npm lives (npm watches no parent): the launcher ends, the
//   shell and npm with it, and the binary sees its parent go, as it would
//   have seen its host go had the host spawned it.
// Started without npm (a global install's bin, node_modules/.bin, node
// itself), the launcher's parent is the host: only the first applies.
const parent = process.ppid;
const npm = process.platform === "win32" ? 0 : npmAbove(parent);
const host = npm ? parentOf(npm) : 0;

// The fleet's cohort (docs/fleet.md) is the client that launched a server:
// the binary would take its parent, this launcher, one a server, for it.
// Unless the client named one, the cohort is the host, as the launcher
// finds it (Unix: on Windows the launcher's parent is npm's cmd.exe); a
// host that is pid 1 (a container's first process) is one too.
const env = { ...process.env };
const client = npm ? host : parent;
if (!env.MAJORDOMUS_MCP_CLIENT_COHORT_ID && process.platform !== "win32" && client >= 1) {
  const start = startOf(client);
  if (start) env.MAJORDOMUS_MCP_CLIENT_COHORT_ID = `host:${client}@${start}`;
}
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true, env });
const watch = setInterval(() => {
  if (process.platform === "win32") {
    if (!alive(parent)) process.exit(1);
  } else if (process.ppid !== parent) {
    clearInterval(watch);
    try {
      child.kill("SIGTERM");
    } catch {}
  } else if (npm && ((npm !== parent && gone(npm, parent)) || (host > 1 && gone(host, npm)))) {
    clearInterval(watch);
    process.exit(1);
  }
}, 100);
watch.unref();

// npmAbove is npm's pid when npm runs this launcher: its parent, or the
// parent of the shell npm ran it through; else 0.
function npmAbove(pid) {
  const node = process.env.npm_lifecycle_event && process.env.npm_node_execpath;
  if (!node) return 0;
  if (isNode(pid, node)) return pid;
  const up = parentOf(pid);
  return up > 1 && isNode(up, node) ? up : 0;
}

// gone says whether pid, the parent of child when the launcher started,
// has ended: on Linux child's parent pid is no longer pid (it changes as
// pid ends, reaped or not), elsewhere pid is not there.
function gone(pid, child) {
  return process.platform === "linux" ? parentOf(child) !== pid : !alive(pid);
}

// parentOf is pid's parent pid, 0 when unknown: /proc on Linux (read on
// every tick), ps elsewhere (asked at start only).
function parentOf(pid) {
  try {
    if (process.platform === "linux") {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    }
    return Number(execFileSync("ps", ["-o", "ppid=", "-p", String(pid)], { encoding: "utf8" }).trim());
  } catch {
    return 0;
  }
}

// startOf is when pid started, "" when unknown: its start in clock ticks
// on Linux, as ps says it elsewhere.
function startOf(pid) {
  try {
    if (process.platform === "linux") {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] || "";
    }
    return execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], { encoding: "utf8" }).trim().replace(/\s+/g, "-");
  } catch {
    return "";
  }
}

// isNode says whether pid runs node, the executable npm runs under.
function isNode(pid, node) {
  try {
    node = fs.realpathSync(node);
    if (process.platform === "linux") return fs.realpathSync(`/proc/${pid}/exe`) === node;
    const comm = execFileSync("ps", ["-o", "comm=", "-p", String(pid)], { encoding: "utf8" }).trim();
    return comm === node || comm === "node" || comm.endsWith("/node");
  } catch {
    return false;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code !== "ESRCH";
  }
}

child.on("error", (err) => {
  process.stderr.write(`majordomus-mcp: cannot start ${binary}: ${err.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal) {
    for (const sig of forwarded) process.removeAllListeners(sig);
    // Node ignores SIGPIPE and starts its inspector on SIGUSR1: for those
    // it ends as a shell reports the death, 128 + the signal's number.
    if (signal !== "SIGPIPE" && signal !== "SIGUSR1") process.kill(process.pid, signal);
    process.exit(128 + (require("os").constants.signals[signal] || 0));
  }
  process.exit(code === null ? 1 : code);
});
