// One document as the server rendered it (GET /api/render: sanitised there), with what the
// HTML alone cannot do filled in here: images fetched with the token as blobs, embedded
// documents loaded, in-app links followed without a page load, the section a hit or a
// `#heading` names scrolled to and highlighted, and the backlinks under it.
import { useEffect, useRef, useState } from "preact/hooks";
import { fileUrl, get, openFile, q, type Backlinks, type Rendered } from "./api";
import { EditPanel } from "./edit";
import { DeleteDocument, MoveDocument } from "./manage";
import { docUrl, Link, navigate } from "./router";
import { anchorFor, Problem, useJson } from "./views";

/// The id the server's sanitiser gives a heading anchor.
const ID_PREFIX = "h-";

/// Fetches every `<img data-file>` under `root` with the token and shows it as a blob.
function fillImages(root: HTMLElement, urls: string[]): void {
  root.querySelectorAll<HTMLImageElement>("img[data-file]").forEach((img) => {
    fileUrl(img.dataset.file!)
      .then((url) => {
        urls.push(url);
        img.src = url;
      })
      .catch(() => img.classList.add("broken"));
  });
}

function fillIn(root: HTMLElement, urls: string[]): void {
  fillImages(root, urls);
  root.querySelectorAll<HTMLElement>("span.embed[data-embed]").forEach((span) => {
    const path = span.dataset.embed!;
    get<Rendered>(`/api/render?path=${q(path)}`)
      .then((doc) => {
        const box = document.createElement("div");
        box.className = "embedded";
        // Sanitised by the server like every rendered document. One level: embeds inside an
        // embed stay links, so a cycle cannot loop.
        box.innerHTML = doc.html;
        box.querySelectorAll("span.embed").forEach((inner) => inner.classList.add("nested"));
        fillImages(box, urls);
        span.appendChild(box);
      })
      .catch(() => span.classList.add("broken"));
  });
}

function scrollToAnchor(root: HTMLElement, doc: Rendered, anchor: string | undefined): void {
  root.querySelectorAll(".highlight").forEach((el) => el.classList.remove("highlight"));
  if (!anchor) return;
  const line = /^L(\d+)$/.exec(anchor);
  const name = line ? anchorFor(doc.headings, Number(line[1])) : anchor;
  const target = name && root.querySelector<HTMLElement>(`[id="${CSS.escape(ID_PREFIX + name)}"]`);
  if (!target) return;
  target.classList.add("highlight");
  target.scrollIntoView({ block: "start" });
}

export function DocumentView(props: { path: string; anchor?: string; readOnly: boolean }) {
  const [version, setVersion] = useState(0);
  const [editing, setEditing] = useState(false);
  const [dialog, setDialog] = useState<"" | "move" | "delete">("");
  useEffect(() => setEditing(false), [props.path]);
  const { data: doc, error } = useJson<Rendered>(`/api/render?path=${q(props.path)}&v=${version}`);
  const { data: backlinks } = useJson<Backlinks>(`/api/backlinks?path=${q(props.path)}`);
  const body = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const root = body.current;
    if (!doc || !root) return;
    const urls: string[] = [];
    fillIn(root, urls);
    return () => urls.forEach((u) => URL.revokeObjectURL(u));
  }, [doc, editing]);

  useEffect(() => {
    if (doc && body.current) scrollToAnchor(body.current, doc, props.anchor);
  }, [doc, props.anchor]);

  const onClick = (e: MouseEvent) => {
    const a = (e.target as HTMLElement).closest("a");
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const file = a.dataset.file;
    if (file) {
      e.preventDefault();
      void openFile(file);
      return;
    }
    const href = a.getAttribute("href") ?? "";
    if (href.startsWith("/f/") || href.startsWith("#")) {
      e.preventDefault();
      navigate(href.startsWith("#") ? `${docUrl(props.path)}${href}` : href);
    }
  };

  if (error) return <Problem error={error} />;
  if (!doc) return <p class="muted">Opening {props.path}…</p>;
  const folder = props.path.split("/")[0];
  // The tags are shown once, as chips, not also as a property row.
  const properties = doc.tags.length > 0 ? doc.properties.filter((p) => p.key !== "tags" && p.key !== "tag") : doc.properties;
  return (
    <article class="doc">
      <nav class="crumbs">
        <Link href="/">Folders</Link> › <Link href={docUrl(folder)}>{folder}</Link> ›{" "}
        {props.path.split("/").slice(1).join(" / ")}
      </nav>
      <div class="doc-actions">
        {doc.converted_from ? null : props.readOnly ? (
          <button disabled title="RAGDOWN_READ_ONLY is set: this server writes nothing">
            Edit
          </button>
        ) : (
          !editing && (
            <>
              <button onClick={() => setEditing(true)}>Edit</button>
              <button class="secondary" onClick={() => setDialog("move")}>Move</button>
              <button class="secondary danger-text" onClick={() => setDialog("delete")}>Delete</button>
            </>
          )
        )}
      </div>
      {dialog === "move" && <MoveDocument path={props.path} onClose={() => setDialog("")} />}
      {dialog === "delete" && <DeleteDocument path={props.path} onClose={() => setDialog("")} />}
      {doc.superseded_by.length > 0 && (
        <p class="banner superseded">
          Superseded by{" "}
          {doc.superseded_by.map((p, i) => (
            <>
              {i > 0 && ", "}
              <Link href={docUrl(p)}>{p}</Link>
            </>
          ))}
        </p>
      )}
      {doc.converted_from && (
        <p class="banner">Converted from {doc.converted_from.toUpperCase()}: read-only here; the original file is the source.</p>
      )}
      {doc.frontmatter_error && <p class="error">The front matter could not be read: {doc.frontmatter_error}</p>}
      {properties.length > 0 && (
        <table class="properties" aria-label="Properties">
          <tbody>
            {properties.map((p) => (
              <tr key={p.key}>
                <th scope="row">{p.key}</th>
                <td>{p.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {doc.tags.length > 0 && (
        <p class="tags">
          {doc.tags.map((t) => (
            <span key={t} class="tag">
              #{t}
            </span>
          ))}
        </p>
      )}
      {editing ? (
        <EditPanel
          path={props.path}
          onClose={(saved) => {
            setEditing(false);
            if (saved) setVersion((v) => v + 1);
          }}
        />
      ) : (
        <div class="markdown" ref={body} onClick={onClick} dangerouslySetInnerHTML={{ __html: doc.html }} />
      )}
      <section class="backlinks" aria-label="Backlinks">
        <h2>Backlinks</h2>
        {!backlinks && <p class="muted">Loading…</p>}
        {backlinks && backlinks.backlinks.length === 0 && <p class="muted">No document links here.</p>}
        <ul>
          {backlinks?.backlinks.map((b) => (
            <li key={b.path}>
              <Link href={docUrl(b.path)}>{b.title}</Link> <span class="muted small">{b.path}</span>
              <ul class="lines">
                {b.lines.map((l) => (
                  <li key={l.line}>
                    <Link href={`${docUrl(b.path)}#L${l.line}`}>line {l.line}</Link>: {l.text}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      </section>
    </article>
  );
}
