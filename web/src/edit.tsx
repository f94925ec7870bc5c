// Editing one document: the source in CodeMirror (its chunk loaded on the first Edit), a
// Write/Preview switch (the preview is the server's rendering of the draft), Ctrl/Cmd+S to save.
// A save carries the hash the text was opened at; when the file changed on disk meanwhile the
// server answers `changed` and the conflict dialog offers save over, discard mine, or both
// side by side — never a silent loss. Leaving with unsaved changes asks first.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, get, q, send, type Listed, type Rendered } from "./api";
import type { Editor } from "./editor";
import { setLeaveGuard } from "./router";

interface Source {
  text: string;
  hash: string;
}

const LEAVE = "This document has unsaved changes. Leave without saving them?";

export function EditPanel(props: { path: string; onClose: (saved: boolean) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const editor = useRef<Editor | null>(null);
  const [base, setBase] = useState<Source | null>(null);
  const [dirty, setDirty] = useState(false);
  const [mode, setMode] = useState<"write" | "preview">("write");
  const [preview, setPreview] = useState("");
  const [message, setMessage] = useState("");
  const [conflict, setConflict] = useState<Source | null>(null);
  const [both, setBoth] = useState(false);
  const [saved, setSaved] = useState(false);
  const folder = props.path.split("/")[0];
  const dirtyRef = useRef(false);
  dirtyRef.current = dirty;

  // Unsaved changes: the browser asks on unload, the app on in-app navigation.
  useEffect(() => {
    const onUnload = (e: BeforeUnloadEvent) => {
      if (dirtyRef.current) e.preventDefault();
    };
    addEventListener("beforeunload", onUnload);
    setLeaveGuard(() => !dirtyRef.current || confirm(LEAVE));
    return () => {
      removeEventListener("beforeunload", onUnload);
      setLeaveGuard(null);
    };
  }, []);

  useEffect(() => {
    let live = true;
    Promise.all([get<Source>(`/api/doc?path=${q(props.path)}`), import("./editor")])
      .then(([source, { mountEditor }]) => {
        if (!live || !host.current) return;
        setBase(source);
        editor.current = mountEditor(host.current, {
          text: source.text,
          onChange: () => setDirty(true),
          onSave: () => save(),
          documents: async () => {
            const { docs } = await get<{ docs: Listed[] }>(`/api/docs?folder=${q(folder)}`);
            return docs.map((d) => d.path.split("/").pop()!.replace(/\.(md|markdown|mdx)$/i, ""));
          },
          headings: async (name) => {
            const found = await get<{ path: string }>(
              `/api/resolve?from=${q(props.path)}&link=${q(name)}`,
            );
            const doc = await get<Rendered>(`/api/render?path=${q(found.path)}`);
            return doc.headings.map((h) => h.name);
          },
        });
        editor.current.focus();
      })
      .catch((e) => live && setMessage(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
      editor.current?.destroy();
      editor.current = null;
    };
  }, [props.path]);

  // `save` is called from the editor's keymap, made once: it reads the latest state by refs.
  const baseRef = useRef(base);
  baseRef.current = base;

  async function write(body: Record<string, unknown>) {
    const text = editor.current?.text() ?? "";
    setMessage("Saving…");
    try {
      const answer = await send<{ hash: string }>("POST", "/api/doc", { path: props.path, text, ...body });
      setBase({ text, hash: answer.hash });
      setDirty(false);
      setConflict(null);
      setBoth(false);
      setSaved(true);
      dialog.current?.close();
      setMessage("Saved.");
    } catch (e) {
      if (e instanceof ApiError && e.code === "changed") {
        const disk = await get<Source>(`/api/doc?path=${q(props.path)}`).catch(() => null);
        setConflict(disk ?? { text: "", hash: "" });
        setMessage("");
        dialog.current?.showModal();
      } else setMessage(e instanceof Error ? e.message : String(e));
    }
  }

  function save() {
    const current = baseRef.current;
    if (current) write({ base_hash: current.hash });
  }

  async function showPreview() {
    setMode("preview");
    const text = editor.current?.text() ?? "";
    try {
      const doc = await send<Rendered>("POST", "/api/render", { path: props.path, text });
      setPreview(doc.html);
    } catch (e) {
      setPreview("");
      setMessage(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <section class="edit" aria-label="Edit document">
      <div class="toolbar">
        <div role="tablist" class="switch">
          <button role="tab" aria-selected={mode === "write"} class={mode === "write" ? "on" : ""} onClick={() => setMode("write")}>
            Write
          </button>
          <button role="tab" aria-selected={mode === "preview"} class={mode === "preview" ? "on" : ""} onClick={showPreview}>
            Preview
          </button>
        </div>
        <span class="muted small status" role="status">
          {message || (dirty ? "Unsaved changes" : "")}
        </span>
        <button onClick={save} disabled={!base}>
          Save
        </button>
        <button
          class="secondary"
          onClick={() => {
            if (dirty && !confirm(LEAVE)) return;
            setDirty(false);
            props.onClose(saved);
          }}
        >
          Done
        </button>
      </div>
      <div ref={host} class="editor" hidden={mode !== "write"} />
      {mode === "preview" && <div class="markdown preview" dangerouslySetInnerHTML={{ __html: preview }} />}
      <dialog ref={dialog} class="conflict" onClose={() => setBoth(false)}>
        <h2>The file changed on disk</h2>
        <p>
          Since you opened it, {props.path} was changed by someone else (another editor, an agent, a
          sync). Your edits are not saved yet.
        </p>
        {both && conflict && (
          <div class="both">
            <figure>
              <figcaption>On disk now</figcaption>
              <pre>{conflict.text}</pre>
            </figure>
            <figure>
              <figcaption>Yours</figcaption>
              <pre>{editor.current?.text()}</pre>
            </figure>
          </div>
        )}
        <div class="actions">
          <button onClick={() => write({ overwrite: true })}>Save mine over it</button>
          <button
            class="secondary"
            onClick={() => {
              if (!conflict) return;
              editor.current?.setText(conflict.text);
              setBase(conflict);
              setDirty(false);
              setConflict(null);
              dialog.current?.close();
              setMessage("Your changes were discarded; this is the file as it is on disk.");
            }}
          >
            Discard mine
          </button>
          <button class="secondary" onClick={() => setBoth(!both)}>
            {both ? "Hide both" : "Show both"}
          </button>
        </div>
      </dialog>
    </section>
  );
}
