// Builds the editor's static files (run `npm run build` from editor/frontend):
//   src/index.js                    -> ../../static/editor/codemirror.bundle.js
//   node_modules/htmx.org/dist/...  -> ../../static/vendor/htmx.min.js
// Both outputs are committed; the banners name the exact versions they came from.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const staticDir = join(here, "..", "..", "static");
const pkg = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));

function installedVersion(name) {
  return JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
}

const bundled = Object.keys(pkg.dependencies).filter((name) => name !== "htmx.org");
const versions = bundled.map((name) => `${name}@${installedVersion(name)}`).join(" ");
const banner =
  `/* sysprompt template editor: ${versions}; esbuild@${esbuild.version}. ` +
  `Built by editor/frontend (npm run build), do not edit. */`;

const bundlePath = join(staticDir, "editor", "codemirror.bundle.js");
mkdirSync(dirname(bundlePath), { recursive: true });
await esbuild.build({
  entryPoints: [join(here, "src", "index.js")],
  outfile: bundlePath,
  bundle: true,
  format: "iife",
  minify: true,
  target: "es2020",
  sourcemap: false,
  legalComments: "none",
  charset: "utf8",
  banner: { js: banner },
  logLevel: "warning",
});

const htmxVersion = installedVersion("htmx.org");
const htmxSource = readFileSync(join(here, "node_modules", "htmx.org", "dist", "htmx.min.js"), "utf8");
const htmxPath = join(staticDir, "vendor", "htmx.min.js");
mkdirSync(dirname(htmxPath), { recursive: true });
writeFileSync(
  htmxPath,
  `/* htmx.org@${htmxVersion} (dist/htmx.min.js), vendored by editor/frontend, do not edit. */\n${htmxSource}`,
);

for (const path of [bundlePath, htmxPath]) {
  console.log(`wrote ${path.slice(join(here, "..", "..").length + 1)} (${readFileSync(path).length} bytes)`);
}
