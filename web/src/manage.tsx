// Changing things: a folder's settings, its name, its deletion, its MCP config to copy; a new
// document, an upload, a document's move (links to it rewritten) and deletion. Every control
// that writes is hidden under RAGDOWN_READ_ONLY except folder settings, which the server keeps
// editable there.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, send, statusMayChange, token, type Folder } from "./api";
import { docUrl, navigate } from "./router";

/// A modal dialog (Esc closes it, focus stays inside while open).
export function Modal(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} class="modal" onClose={props.onClose} aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/// A file name from a title: what a person would type, minus what paths cannot hold.
export function fileName(title: string): string {
  return title.trim().replace(/[\\/:*?"<>|#^[\]]+/g, "-").replace(/\s+/g, " ") + ".md";
}

export function NewDocument(props: { folder: string; onClose: () => void }) {
  const [title, setTitle] = useState("");
  const [sub, setSub] = useState("");
  const [error, setError] = useState("");
  const [taken, setTaken] = useState("");
  const path = [props.folder, ...sub.split("/").map((s) => s.trim()).filter(Boolean), fileName(title)].join("/");
  return (
    <Modal title="New document" onClose={props.onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setError("");
          setTaken("");
          try {
            await send("POST", "/api/doc", { path, text: `# ${title.trim()}\n` });
            props.onClose();
            navigate(docUrl(path));
          } catch (err) {
            if (err instanceof ApiError && err.status === 409) setTaken(path);
            else setError(message(err));
          }
        }}
      >
        <label>
          Title <input name="title" value={title} onInput={(e) => setTitle(e.currentTarget.value)} required autofocus />
        </label>
        <label>
          Subfolder (optional, created if missing){" "}
          <input name="subfolder" value={sub} placeholder="notes/2026" onInput={(e) => setSub(e.currentTarget.value)} />
        </label>
        {title.trim() && <p class="muted small">Creates {path}</p>}
        {taken && (
          <p class="error" role="alert">
            {taken} already exists.{" "}
            <button type="button" class="link" onClick={() => { props.onClose(); navigate(docUrl(taken)); }}>
              Open it
            </button>
          </p>
        )}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="submit" disabled={!title.trim()}>Create</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Modal>
  );
}

/// Uploads one Markdown file into the folder (a subfolder when given); an existing one is
/// replaced only after asking.
export function UploadButton(props: { folder: string; onDone: (path: string) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState("");
  return (
    <>
      <button class="secondary" onClick={() => input.current?.click()}>Upload</button>
      <input
        ref={input}
        type="file"
        accept=".md,.markdown,.mdx"
        hidden
        aria-label="Upload a Markdown file"
        onChange={async (e) => {
          const file = e.currentTarget.files?.[0];
          e.currentTarget.value = "";
          if (!file) return;
          if (!/\.(md|markdown|mdx)$/i.test(file.name)) {
            setError(`${file.name} is not Markdown: upload .md, .markdown or .mdx files`);
            return;
          }
          const path = `${props.folder}/${file.name}`;
          const text = await file.text();
          setError("");
          try {
            await send("POST", "/api/doc", { path, text });
            props.onDone(path);
          } catch (err) {
            if (err instanceof ApiError && err.status === 409 && confirm(`${path} already exists. Replace it with the uploaded file?`)) {
              await send("POST", "/api/doc", { path, text, overwrite: true }).catch((x) => setError(message(x)));
              props.onDone(path);
            } else if (!(err instanceof ApiError && err.status === 409)) setError(message(err));
          }
        }}
      />
      {error && <span class="error" role="alert">{error}</span>}
    </>
  );
}

export function MoveDocument(props: { path: string; onClose: () => void }) {
  const [to, setTo] = useState(props.path);
  const [error, setError] = useState("");
  const [updated, setUpdated] = useState<string[] | null>(null);
  const [moved, setMoved] = useState("");
  return (
    <Modal title="Rename or move" onClose={props.onClose}>
      {updated ? (
        <div class="stack">
          <p>Moved to {moved}.</p>
          {updated.length > 0 ? (
            <>
              <p>Links to it were rewritten in:</p>
              <ul class="updated">{updated.map((p) => <li key={p}>{p}</li>)}</ul>
            </>
          ) : (
            <p class="muted">No document linked to it.</p>
          )}
          <div class="actions">
            <button onClick={() => { props.onClose(); navigate(docUrl(moved)); }}>Open it</button>
          </div>
        </div>
      ) : (
        <form
          class="stack"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              const answer = await send<{ to: string; updated: string[] }>("POST", "/api/move", { from: props.path, to });
              setMoved(answer.to);
              setUpdated(answer.updated);
            } catch (err) {
              setError(message(err));
            }
          }}
        >
          <label>
            New path (within {props.path.split("/")[0]}){" "}
            <input name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} autofocus />
          </label>
          {error && <p class="error" role="alert">{error}</p>}
          <div class="actions">
            <button type="submit" disabled={to === props.path}>Move</button>
            <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          </div>
        </form>
      )}
    </Modal>
  );
}

export function DeleteDocument(props: { path: string; onClose: () => void }) {
  const [error, setError] = useState("");
  return (
    <Modal title="Delete document" onClose={props.onClose}>
      <p>
        Delete {props.path}? There is no trash and no undo; links to it will dangle.
      </p>
      {error && <p class="error" role="alert">{error}</p>}
      <div class="actions">
        <button
          class="danger"
          onClick={async () => {
            try {
              await send("DELETE", `/api/doc?path=${encodeURIComponent(props.path)}`);
              props.onClose();
              navigate(docUrl(props.path.split("/")[0]));
            } catch (err) {
              setError(message(err));
            }
          }}
        >
          Delete
        </button>
        <button class="secondary" onClick={props.onClose} autofocus>Cancel</button>
      </div>
    </Modal>
  );
}

/// What an MCP client needs to reach an endpoint, as `claude mcp add` and as JSON. The token
/// is never written out: the lines read `$RAGDOWN_TOKEN` from the user's environment (the shell
/// expands it; Claude Code expands `${RAGDOWN_TOKEN}` in `.mcp.json`), so it stays out of shell
/// history and of anything pasted.
export function mcpConfig(name: string, url: string): { command: string; json: string } {
  const needsToken = token() !== "";
  const header = needsToken ? ` \\\n  --header "Authorization: Bearer $RAGDOWN_TOKEN"` : "";
  const entry: Record<string, unknown> = { type: "http", url };
  if (needsToken) entry.headers = { Authorization: "Bearer ${RAGDOWN_TOKEN}" };
  return {
    command: `claude mcp add --transport http ${name} ${url}${header}`,
    json: JSON.stringify({ mcpServers: { [name]: entry } }, null, 2),
  };
}

/// Claude Code's hooks that add the related sections to every prompt (`ragdown_context` on the
/// server added as `name`), and let them be sent again after a compaction.
export function claudeHooks(name: string): string {
  const context = (input: Record<string, unknown>) => ({
    type: "mcp_tool",
    server: name,
    tool: "ragdown_context",
    input,
  });
  return JSON.stringify(
    {
      hooks: {
        UserPromptSubmit: [
          { hooks: [context({ prompt: "${prompt}", session_id: "claude:${session_id}", format: "claude-code" })] },
        ],
        SessionStart: [
          {
            matcher: "compact",
            hooks: [context({ prompt: "", session_id: "claude:${session_id}", reset: true })],
          },
        ],
      },
    },
    null,
    2,
  );
}

function CopyBlock(props: { label: string; text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <figure class="copy">
      <figcaption>
        {props.label}{" "}
        <button
          class="link"
          onClick={() => navigator.clipboard?.writeText(props.text).then(() => setCopied(true))}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </figcaption>
      <pre>{props.text}</pre>
    </figure>
  );
}

export function McpConfig(props: { folder: Folder; root: boolean }) {
  const name = `ragdown-${props.folder.name}`;
  const folderConfig = mcpConfig(name, `${location.origin}${props.folder.mcp_path}`);
  const rootConfig = mcpConfig("ragdown", `${location.origin}/mcp`);
  return (
    <div class="mcp-config">
      {token() !== "" && (
        <p class="muted small">
          These read the token from <code>$RAGDOWN_TOKEN</code>: set it in your shell to the token you signed in with.
        </p>
      )}
      <CopyBlock label="Claude Code" text={folderConfig.command} />
      <CopyBlock label="JSON (mcpServers)" text={folderConfig.json} />
      <p class="muted small">
        Related sections on every prompt, without Claude asking: these hooks in <code>.claude/settings.json</code>{" "}
        call <code>ragdown_context</code> on the server added above.
      </p>
      <CopyBlock label="Claude Code hooks" text={claudeHooks(name)} />
      <p class="muted small">
        The MCP Inspector guesses the transport only for URLs ending in <code>/mcp</code>: give it{" "}
        <code>--transport http</code> for this one.
      </p>
      {props.root && (
        <>
          <p class="muted small">Every MCP folder at once, through the root endpoint:</p>
          <CopyBlock label="Root endpoint" text={rootConfig.command} />
        </>
      )}
    </div>
  );
}

type HookField = "top_k" | "min_evidence" | "min_score" | "min_ratio" | "max_chars";
const HOOK_FIELDS: { key: HookField; label: string; step: string }[] = [
  { key: "top_k", label: "Sections injected at most (top_k)", step: "1" },
  { key: "min_evidence", label: "Evidence a prompt needs (min_evidence)", step: "0.01" },
  { key: "min_score", label: "Minimum similarity (min_score)", step: "0.01" },
  { key: "min_ratio", label: "Minimum share of the best (min_ratio)", step: "0.01" },
  { key: "max_chars", label: "Characters at most (max_chars)", step: "100" },
];

export interface FolderWithHook extends Folder {
  hook: Partial<Record<HookField, number | null>>;
}

/// Title, MCP switch and the hook's values for this folder (empty: the server's value).
export function FolderSettings(props: { folder: FolderWithHook; onSaved: (f: FolderWithHook) => void }) {
  const f = props.folder;
  const [title, setTitle] = useState(f.title);
  const [mcp, setMcp] = useState(f.mcp);
  const [hook, setHook] = useState<Record<HookField, string>>(() => {
    const out = {} as Record<HookField, string>;
    for (const { key } of HOOK_FIELDS) out[key] = f.hook[key] == null ? "" : String(f.hook[key]);
    return out;
  });
  const [note, setNote] = useState("");
  return (
    <form
      class="stack settings"
      aria-label="Folder settings"
      onSubmit={async (e) => {
        e.preventDefault();
        const patch: Record<string, number | null> = {};
        for (const { key } of HOOK_FIELDS) patch[key] = hook[key].trim() === "" ? null : Number(hook[key]);
        try {
          const answer = await send<{ folder: FolderWithHook }>("PATCH", `/api/folders/${encodeURIComponent(f.name)}`, {
            title,
            mcp,
            hook: patch,
          });
          props.onSaved(answer.folder);
          setNote("Saved.");
        } catch (err) {
          setNote(message(err));
        }
      }}
    >
      <label>
        Title <input name="title" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      </label>
      <label class="inline">
        <input type="checkbox" name="mcp" checked={mcp} onChange={(e) => setMcp(e.currentTarget.checked)} /> Serve this
        folder over MCP (agents can reach it at {f.mcp_path})
      </label>
      <fieldset>
        <legend>Hook (empty: the server's value)</legend>
        {HOOK_FIELDS.map(({ key, label, step }) => (
          <label key={key}>
            {label}{" "}
            <input
              type="number"
              name={key}
              step={step}
              min="0"
              value={hook[key]}
              onInput={(e) => setHook({ ...hook, [key]: e.currentTarget.value })}
            />
          </label>
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit">Save settings</button>
        <span class="muted small" role="status">{note}</span>
      </div>
    </form>
  );
}

export function RenameFolder(props: { folder: string; onClose: () => void }) {
  const [to, setTo] = useState(props.folder);
  const [error, setError] = useState("");
  return (
    <Modal title="Rename folder" onClose={props.onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const answer = await send<{ folder: Folder }>("PATCH", `/api/folders/${encodeURIComponent(props.folder)}`, { name: to });
            statusMayChange();
            props.onClose();
            navigate(docUrl(answer.folder.name));
          } catch (err) {
            setError(message(err));
          }
        }}
      >
        <p class="muted small">The folder is re-indexed under its new name; MCP clients need its new URL.</p>
        <label>
          New name <input name="name" value={to} onInput={(e) => setTo(e.currentTarget.value)} autofocus />
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="submit" disabled={!to.trim() || to === props.folder}>Rename</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Modal>
  );
}

export function DeleteFolder(props: { folder: string; onClose: () => void }) {
  const [typed, setTyped] = useState("");
  const [error, setError] = useState("");
  return (
    <Modal title="Delete folder" onClose={props.onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await send("DELETE", `/api/folders/${encodeURIComponent(props.folder)}?confirm=${encodeURIComponent(typed)}`);
            props.onClose();
            navigate("/");
          } catch (err) {
            setError(message(err));
          }
        }}
      >
        <p>
          This removes the folder <strong>{props.folder}</strong> and every file in it, from disk. Type its name to
          confirm.
        </p>
        <input name="confirm" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} aria-label="Folder name" autofocus />
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="submit" class="danger" disabled={typed !== props.folder}>Delete folder</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Modal>
  );
}

export function CreateFolder(props: { onClose: () => void }) {
  const [name, setName] = useState("");
  const [mcp, setMcp] = useState(false);
  const [error, setError] = useState("");
  return (
    <Modal title="New folder" onClose={props.onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const answer = await send<{ folder: Folder }>("POST", "/api/folders", { name: name.trim(), mcp });
            props.onClose();
            navigate(docUrl(answer.folder.name));
          } catch (err) {
            setError(message(err));
          }
        }}
      >
        <label>
          Name <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} autofocus />
        </label>
        <label class="inline">
          <input type="checkbox" checked={mcp} onChange={(e) => setMcp(e.currentTarget.checked)} /> Serve it over MCP
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="submit" disabled={!name.trim()}>Create</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Modal>
  );
}
