// Build dist/: TypeScript to ESM with declarations (tsc), then each ESM file to
// CommonJS (esbuild, file by file: the two trees have the same modules), the
// declarations copied beside them, and dist/cjs marked CommonJS.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { transformSync } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const esm = join(root, "dist", "esm");
const cjs = join(root, "dist", "cjs");

rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], {
  cwd: root,
  stdio: "inherit",
});

function* files(folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

for (const path of files(esm)) {
  const target = join(cjs, relative(esm, path));
  mkdirSync(dirname(target), { recursive: true });
  if (path.endsWith(".d.ts")) {
    copyFileSync(path, target);
  } else if (path.endsWith(".js")) {
    const { code } = transformSync(readFileSync(path, "utf8"), { format: "cjs", target: "es2022", sourcefile: path });
    writeFileSync(target, code);
  }
}
writeFileSync(join(cjs, "package.json"), '{\n  "type": "commonjs"\n}\n');
console.log("built dist/esm and dist/cjs");
