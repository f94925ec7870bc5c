// The folder list, a folder's tree of documents, and search results.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { get, q, send, type Folder, type Hit, type Listed, type Status } from "./api";
import {
  CreateFolder,
  DeleteFolder,
  type FolderWithHook,
  FolderSettings,
  McpConfig,
  NewDocument,
  RenameFolder,
  UploadButton,
} from "./manage";
import { docUrl, Link, navigate } from "./router";

/// Loads `path` whenever it changes; `null` while loading.
export function useJson<T>(path: string | null): { data: T | null; error: string; reload: () => void } {
  const [version, setVersion] = useState(0);
  // A reload keeps showing what is there until the new data arrives; a new path starts empty.
  const shown = useRef(path);
  const [state, setState] = useState<{ data: T | null; error: string }>({ data: null, error: "" });
  useEffect(() => {
    if (!path) return;
    let live = true;
    if (shown.current !== path) setState({ data: null, error: "" });
    shown.current = path;
    get<T>(path)
      .then((data) => live && setState({ data, error: "" }))
      .catch((e) => live && setState({ data: null, error: e instanceof Error ? e.message : String(e) }));
    return () => {
      live = false;
    };
  }, [path, version]);
  return { ...state, reload: () => setVersion((v) => v + 1) };
}

/// "1 document", "3 documents".
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/// A section's Markdown as a snippet reads: links and wikilinks as their labels, no code
/// ticks, emphasis marks, heading marks or image syntax. Only for display: hits keep their text.
export function plainText(markdown: string): string {
  return markdown
    .replace(/!\[\[[^\]]*\]\]/g, "")
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[\[([^\]|#]*)(?:#([^\]|]*))?(?:\|([^\]]*))?\]\]/g, (_, target, heading, label) => label ?? (heading ? `${target} › ${heading}` : target))
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`+([^`]*)`+/g, "$1")
    .replace(/^#{1,6}\s+/gm, "")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/gm, "$1$2")
    .replace(/\s+/g, " ")
    .trim();
}

export function Problem(props: { error: string }) {
  return (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}

/// Moves every loose file into one folder (made when missing), then opens it.
function AdoptLoose(props: { count: number }) {
  const [name, setName] = useState("notes");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="adopt-loose"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError("");
        try {
          const moved = await send<{ folder: Folder }>("POST", "/api/loose", { folder: name.trim() });
          navigate(docUrl(moved.folder.name));
        } catch (err) {
          setError(err instanceof Error ? err.message : String(err));
          setBusy(false);
        }
      }}
    >
      <label>
        Move {props.count === 1 ? "it" : `all ${props.count}`} into the folder{" "}
        <input value={name} aria-label="Folder to move the loose files into" onInput={(e) => setName(e.currentTarget.value)} />
      </label>{" "}
      <button type="submit" disabled={busy || !name.trim()}>
        Move into a folder
      </button>
      {error && <Problem error={error} />}
    </form>
  );
}

export function FolderList(props: { status: Status }) {
  const { data, error, reload } = useJson<{ folders: Folder[]; loose_files: string[] }>("/api/folders");
  const [creating, setCreating] = useState(false);
  if (error) return <Problem error={error} />;
  if (!data) return <p class="muted">Loading folders…</p>;
  return (
    <section>
      <div class="page-actions">
        {!props.status.read_only && <button onClick={() => setCreating(true)}>New folder</button>}
      </div>
      {creating && <CreateFolder onClose={() => setCreating(false)} />}
      <h1>Folders</h1>
      {data.folders.length === 0 && (
        <p class="muted">No folders yet: every directory at the top of the docs dir is a folder.</p>
      )}
      <ul class="cards" aria-label="Folders">
        {data.folders.map((f) => (
          <li key={f.name} class="card">
            <Link href={docUrl(f.name)}>
              <strong>{f.title}</strong>
            </Link>
            <span class="muted">
              {plural(f.files, "document")} · MCP {f.mcp ? "on" : "off"}
            </span>
            {f.created_by && <span class="badge">Made by an agent</span>}
          </li>
        ))}
      </ul>
      {data.loose_files.length > 0 && (
        <>
          <h2>Loose files</h2>
          <p class="muted">
            Markdown at the top of the docs dir belongs to no folder and is not indexed: each directory there is a
            folder.
          </p>
          {!props.status.read_only && <AdoptLoose count={data.loose_files.length} />}
          <ul class="loose">
            {data.loose_files.map((f) => (
              <li key={f}>
                {f}{" "}
                {!props.status.read_only && (
                  <button
                    class="link danger-text"
                    onClick={async () => {
                      if (!confirm(`Delete ${f}? There is no trash and no undo.`)) return;
                      await send("DELETE", `/api/loose?name=${q(f)}`).catch((e) => alert(String(e)));
                      reload();
                    }}
                  >
                    Delete
                  </button>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

interface TreeNode {
  name: string;
  path: string;
  doc?: Listed;
  children: Map<string, TreeNode>;
}

function buildTree(folder: string, docs: Listed[]): TreeNode {
  const root: TreeNode = { name: folder, path: folder, children: new Map() };
  for (const doc of docs) {
    const parts = doc.path.split("/").slice(1);
    let node = root;
    parts.forEach((part, i) => {
      let child = node.children.get(part);
      if (!child) {
        child = { name: part, path: `${node.path}/${part}`, children: new Map() };
        node.children.set(part, child);
      }
      if (i === parts.length - 1) child.doc = doc;
      node = child;
    });
  }
  return root;
}

const CONVERTED = /\.(pdf|docx|html?|txt)$/i;

function TreeList(props: { node: TreeNode }) {
  const entries = [...props.node.children.values()].sort((a, b) => {
    const dirs = Number(!!a.doc) - Number(!!b.doc);
    return dirs !== 0 ? dirs : a.name.localeCompare(b.name);
  });
  return (
    <ul class="tree">
      {entries.map((node) =>
        node.doc ? (
          <li key={node.path}>
            <Link href={docUrl(node.path)}>{node.doc.title}</Link>{" "}
            <span class="muted small">{node.name}</span>
            {CONVERTED.test(node.name) && <span class="badge small">converted</span>}
            {node.doc.superseded_by.length > 0 && <span class="badge small">superseded</span>}
          </li>
        ) : (
          <li key={node.path}>
            <details open>
              <summary>{node.name}/</summary>
              <TreeList node={node} />
            </details>
          </li>
        ),
      )}
    </ul>
  );
}

export function FolderTree(props: { folder: string; status: Status }) {
  const { data, error, reload } = useJson<{ docs: Listed[] }>(`/api/docs?folder=${q(props.folder)}`);
  const folders = useJson<{ folders: FolderWithHook[] }>("/api/folders");
  const tree = useMemo(() => data && buildTree(props.folder, data.docs), [data, props.folder]);
  const [dialog, setDialog] = useState<"" | "new" | "rename" | "delete">("");
  const [panel, setPanel] = useState<"" | "settings" | "mcp">("");
  if (error) return <Problem error={error} />;
  if (!tree || !data) return <p class="muted">Loading {props.folder}…</p>;
  const folder = folders.data?.folders.find((f) => f.name === props.folder);
  const writable = !props.status.read_only;
  const close = () => setDialog("");
  return (
    <section>
      <nav class="crumbs">
        <Link href="/">Folders</Link> › {props.folder}
      </nav>
      <div class="page-actions">
        {writable && <button onClick={() => setDialog("new")}>New document</button>}
        {writable && <UploadButton folder={props.folder} onDone={(path) => navigate(docUrl(path))} />}
        <button class="secondary" aria-expanded={panel === "settings"} onClick={() => setPanel(panel === "settings" ? "" : "settings")}>
          Settings
        </button>
        {folder?.mcp && (
          <button class="secondary" aria-expanded={panel === "mcp"} onClick={() => setPanel(panel === "mcp" ? "" : "mcp")}>
            Copy MCP config
          </button>
        )}
        {writable && <button class="secondary" onClick={() => setDialog("rename")}>Rename</button>}
        {writable && <button class="secondary danger-text" onClick={() => setDialog("delete")}>Delete</button>}
      </div>
      {props.status.read_only && (
        <p class="muted small">This server is read-only (RAGDOWN_READ_ONLY): documents cannot be written; folder settings can.</p>
      )}
      {dialog === "new" && <NewDocument folder={props.folder} onClose={close} />}
      {dialog === "rename" && <RenameFolder folder={props.folder} onClose={close} />}
      {dialog === "delete" && <DeleteFolder folder={props.folder} onClose={close} />}
      <h1>{folder?.title ?? props.folder}</h1>
      {panel === "settings" && folder && <FolderSettings folder={folder} onSaved={() => { folders.reload(); reload(); }} />}
      {panel === "mcp" && folder && <McpConfig folder={folder} root={!!props.status.settings?.root_mcp} />}
      <p class="muted">{plural(data.docs.length, "document")}</p>
      <TreeList node={tree} />
    </section>
  );
}

/// The anchor of the deepest heading holding `line`, for opening a hit at its section.
export function anchorFor(headings: { anchor: string; level: number; line: number; end_line: number }[], line: number) {
  let best: { anchor: string; level: number } | null = null;
  for (const h of headings) {
    if (h.line <= line && line <= h.end_line && (!best || h.level >= best.level)) best = h;
  }
  return best?.anchor;
}

export function SearchView(props: { query: string; folder?: string }) {
  const path = props.query.trim()
    ? `/api/search?q=${q(props.query)}${props.folder ? `&folder=${q(props.folder)}` : ""}`
    : null;
  const { data, error } = useJson<{ hits: Hit[]; note?: string }>(path);
  if (!path) return <p class="muted">Type a question or some words, then Enter.</p>;
  if (error) return <Problem error={error} />;
  if (!data) return <p class="muted">Searching…</p>;
  return (
    <section>
      <h1>
        Results for “{props.query}”{props.folder && <span class="muted"> in {props.folder}</span>}
      </h1>
      {data.note && <p class="banner">{data.note}</p>}
      {data.hits.length === 0 && <p class="muted">Nothing found.</p>}
      <ol class="hits">
        {data.hits.map((hit) => (
          <li key={`${hit.path}:${hit.start_line}`} class="hit">
            <Link href={`${docUrl(hit.path)}#L${hit.start_line}`}>
              <strong>{hit.heading || hit.title}</strong>
            </Link>
            <div class="muted small">
              {hit.path} · lines {hit.start_line}–{hit.end_line} · similarity {hit.similarity.toFixed(2)} ·{" "}
              {hit.modified.slice(0, 10)}
            </div>
            <p class="snippet">{plainText(hit.text).slice(0, 280)}</p>
          </li>
        ))}
      </ol>
    </section>
  );
}
