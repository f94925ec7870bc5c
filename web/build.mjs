// Builds web/dist: hashed, minified bundles under dist/assets (served immutable) and an
// index.html that names them (served no-cache). Deterministic: the same sources give the same
// bytes, so CI can tell a stale committed dist by `git diff --exit-code web/dist`.
import { build } from "esbuild";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const dist = "dist";
rmSync(dist, { recursive: true, force: true });
mkdirSync(path.join(dist, "assets"), { recursive: true });

const result = await build({
  entryPoints: ["src/main.tsx"],
  bundle: true,
  splitting: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  outdir: path.join(dist, "assets"),
  entryNames: "[name]-[hash]",
  chunkNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  metafile: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  logLevel: "warning",
});

let script = "";
let style = "";
for (const [file, meta] of Object.entries(result.metafile.outputs)) {
  if (meta.entryPoint !== "src/main.tsx") continue;
  script = "/" + path.relative(dist, file);
  if (meta.cssBundle) style = "/" + path.relative(dist, meta.cssBundle);
}
if (!script) throw new Error("esbuild wrote no entry bundle");

writeFileSync(
  path.join(dist, "index.html"),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="csp-nonce" content="__CSP_NONCE__">
<title>ragdown</title>
${style ? `<link rel="stylesheet" href="${style}">\n` : ""}<script type="module" src="${script}"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`,
);
