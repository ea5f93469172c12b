#!/usr/bin/env node
// majordomus-mcp's npm launcher: starts the binary that npm installed from
// this platform's optional dependency (@majordomus-mcp/<platform>-<arch>),
// with the same arguments, stdio, working directory and environment. Node
// cannot exec, so it stays as the binary's parent: it passes on every
// signal a host ends its server with, and ends as the binary did (its exit
// code, or the same signal).
"use strict";
const { spawn } = require("child_process");

const pkg = `@majordomus-mcp/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "majordomus-mcp.exe" : "majordomus-mcp";

let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch (err) {
  process.stderr.write(
    `majordomus-mcp: no binary for ${process.platform}-${process.arch}: ${pkg} is not installed ` +
      `(npm skips optional dependencies with --omit=optional or --no-optional; ` +
      `majordomus-mcp ships for linux, darwin and win32 on x64 and arm64)\n`,
  );
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGBREAK"].filter(
  (s) => process.platform === "win32" ? s !== "SIGQUIT" && s !== "SIGHUP" : s !== "SIGBREAK",
);
for (const sig of forwarded) {
  process.on(sig, () => {
    try {
      child.kill(sig);
    } catch {}
  });
}

// npx does not pass a signal on: SIGINT or SIGTERM ends npm and leaves
// this launcher and the binary running, orphaned, until stdin ends. When
// this process is orphaned (re-parented: Unix), the binary is ended as the
// host meant, so that it removes its lease before it dies.
if (process.platform !== "win32") {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(watch);
      try {
        child.kill("SIGTERM");
      } catch {}
    }
  }, 100);
  watch.unref();
}

child.on("error", (err) => {
  process.stderr.write(`majordomus-mcp: cannot start ${binary}: ${err.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal) {
    for (const sig of forwarded) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
