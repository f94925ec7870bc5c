// Settings → Server (every PATCH /api/settings field: the value in effect, the saved one, the
// environment's, and "back to the variable") and Settings → Usage (the query log's summary).
import { useEffect, useState } from "preact/hooks";
import { send, statusMayChange } from "./api";
import { Link } from "./router";
import { Problem, useJson } from "./views";

type Scalar = string | number | boolean | null;
/// Setting values by name; `hook` holds the hook's own.
type Values = { [key: string]: unknown; hook?: Record<string, Scalar> };

interface SettingsShape extends Values {
  saved: Values;
  env: Values;
  embedders: Record<string, { min_score: number }>;
}

interface Field {
  key: string;
  label: string;
  kind: "bool" | "number" | "embedder";
  hook?: boolean;
  step?: string;
}

const FIELDS: Field[] = [
  { key: "embedder", label: "Embedding model (a change re-embeds every folder)", kind: "embedder" },
  { key: "watch", label: "Follow edits on disk (watch)", kind: "bool" },
  { key: "root_mcp", label: "Root MCP endpoint /mcp over every MCP folder", kind: "bool" },
  { key: "query_log", label: "Keep a query log (Usage)", kind: "bool" },
  { key: "text_limit", label: "Characters of text per hit (text_limit)", kind: "number", step: "1" },
  { key: "max_per_document", label: "Hits per document at most (0: no limit)", kind: "number", step: "1" },
  { key: "follow_links", label: "Linked sections added per search (follow_links)", kind: "number", step: "1" },
  { key: "top_k", label: "Hook: sections injected at most", kind: "number", hook: true, step: "1" },
  {
    key: "min_evidence",
    label: "Hook: evidence a prompt needs (min_evidence; ragdown eval --offtopic suggests one)",
    kind: "number",
    hook: true,
    step: "0.01",
  },
  { key: "min_score", label: "Hook: minimum similarity (min_score)", kind: "number", hook: true, step: "0.01" },
  { key: "min_ratio", label: "Hook: minimum share of the best (min_ratio)", kind: "number", hook: true, step: "0.01" },
  { key: "max_chars", label: "Hook: characters at most (max_chars)", kind: "number", hook: true, step: "100" },
];

function pick(values: Values | undefined, field: Field): Scalar | undefined {
  if (!values) return undefined;
  return (field.hook ? values.hook?.[field.key] : values[field.key]) as Scalar | undefined;
}

function shown(value: Scalar | undefined): string {
  if (value === undefined || value === null) return "—";
  if (typeof value === "boolean") return value ? "on" : "off";
  return String(value);
}

function patchOf(field: Field, value: Scalar): Record<string, unknown> {
  return field.hook ? { hook: { [field.key]: value } } : { [field.key]: value };
}

function SettingRow(props: { field: Field; settings: SettingsShape; onChanged: () => void }) {
  const { field, settings } = props;
  const effective = pick(settings, field);
  const saved = pick(settings.saved, field);
  const env = pick(settings.env, field);
  const [draft, setDraft] = useState<string>(effective == null ? "" : String(effective));
  useEffect(() => setDraft(effective == null ? "" : String(effective)), [effective]);
  const [note, setNote] = useState("");
  const apply = async (value: Scalar) => {
    setNote(field.kind === "embedder" ? "Switching: loading the model and re-embedding…" : "Saving…");
    try {
      await send("PATCH", "/api/settings", patchOf(field, value));
      setNote("Saved.");
      props.onChanged();
      // An embedder or watch change reopens every folder: the banner shows the rebuild.
      if (field.kind === "embedder" || field.key === "watch") statusMayChange();
    } catch (e) {
      setNote(e instanceof Error ? e.message : String(e));
    }
  };
  const embedder = String(settings.embedder ?? "");
  const floor = settings.embedders?.[embedder]?.min_score;
  const lowFloor = field.key === "min_score" && typeof effective === "number" && floor !== undefined && effective <= floor;
  return (
    <tr data-setting={field.key}>
      <th scope="row">
        <label for={`setting-${field.key}`}>{field.label}</label>
        {lowFloor && (
          <p class="error small" role="alert">
            At or under {embedder}'s off-topic floor ({floor}): the hook would inject into prompts the notes do not answer.
          </p>
        )}
      </th>
      <td>
        {field.kind === "bool" ? (
          <input
            id={`setting-${field.key}`}
            type="checkbox"
            checked={effective === true}
            onChange={(e) => apply(e.currentTarget.checked)}
          />
        ) : field.kind === "embedder" ? (
          <select id={`setting-${field.key}`} value={embedder} onChange={(e) => apply(e.currentTarget.value)}>
            {[...new Set([embedder, ...Object.keys(settings.embedders ?? {})])].map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        ) : (
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              apply(draft.trim() === "" ? null : Number(draft));
            }}
          >
            <input
              id={`setting-${field.key}`}
              type="number"
              step={field.step}
              min="0"
              value={draft}
              onInput={(e) => setDraft(e.currentTarget.value)}
            />
            <button type="submit" class="secondary">
              Set
            </button>
          </form>
        )}
        <span class="muted small" role="status">
          {note}
        </span>
      </td>
      <td class="saved">{shown(saved)}</td>
      <td class="env">{shown(env)}</td>
      <td>
        {saved !== undefined && saved !== null && (
          <button class="link" onClick={() => apply(null)} title="Forget the saved value: the environment's (or the default) applies">
            Back to the variable
          </button>
        )}
      </td>
    </tr>
  );
}

export function ServerSettings() {
  const { data, error, reload } = useJson<{ settings: SettingsShape; read_only: boolean }>("/api/status");
  if (error) return <Problem error={error} />;
  if (!data) return <p class="muted">Loading settings…</p>;
  return (
    <section>
      <nav class="crumbs">
        Settings › Server · <Link href="/settings/usage">Usage</Link>
      </nav>
      <h1>Server settings</h1>
      <p class="muted">
        Applied at once and saved in <code>.ragdown-server.json</code> in the docs dir. A saved value wins over its
        environment variable until you give it back.
      </p>
      <table class="settings-table">
        <thead>
          <tr>
            <th>Setting</th>
            <th>In effect</th>
            <th>Saved</th>
            <th>Environment</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {FIELDS.map((field) => (
            <SettingRow key={field.key} field={field} settings={data.settings} onChanged={reload} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

interface Usage {
  enabled: boolean;
  entries: number;
  searches: { total: number; recall: number; web: number; latency_ms: { p50: number | null; p95: number | null } };
  gaps: { count: number; recent: { query: string; folder: string; best: number | null }[] };
  hook: { calls: number; injected: number; rate: number };
  most_read: { folder: string; path: string; reads: number; after_search: number }[];
}

function ms(value: number | null): string {
  return value === null || value === undefined ? "—" : `${value.toFixed(1)} ms`;
}

export function UsageView() {
  const { data, error, reload } = useJson<Usage>("/api/query-log");
  const [note, setNote] = useState("");
  if (error) return <Problem error={error} />;
  if (!data) return <p class="muted">Loading usage…</p>;
  return (
    <section>
      <nav class="crumbs">
        <Link href="/settings">Settings › Server</Link> · Usage
      </nav>
      <h1>Usage</h1>
      {!data.enabled && (
        <p class="banner" role="status">
          The query log is off, so nothing is recorded. Turn on “Keep a query log” in{" "}
          <Link href="/settings">Settings → Server</Link> (or set <code>RAGDOWN_QUERY_LOG=true</code>).
        </p>
      )}
      <dl class="usage">
        <dt>Searches</dt>
        <dd>
          {data.searches.total} ({data.searches.recall} by agents, {data.searches.web} here)
        </dd>
        <dt>Latency</dt>
        <dd>
          median {ms(data.searches.latency_ms.p50)}, 95th percentile {ms(data.searches.latency_ms.p95)}
        </dd>
        <dt>Gaps</dt>
        <dd>{data.gaps.count} searches whose best hit was under the minimum score</dd>
        <dt>Hook</dt>
        <dd>
          injected into {data.hook.injected} of {data.hook.calls} prompts ({(data.hook.rate * 100).toFixed(0)}%)
        </dd>
      </dl>
      {data.gaps.recent.length > 0 && (
        <>
          <h2>Recent gaps</h2>
          <ul class="gaps">
            {data.gaps.recent.map((g, i) => (
              <li key={i}>
                “{g.query}” in {g.folder} — best {g.best === null ? "nothing" : g.best.toFixed(2)}
              </li>
            ))}
          </ul>
        </>
      )}
      {data.most_read.length > 0 && (
        <>
          <h2>Read most</h2>
          <table class="most-read">
            <thead>
              <tr>
                <th>Document</th>
                <th>Reads</th>
                <th>After a search that showed it</th>
              </tr>
            </thead>
            <tbody>
              {data.most_read.map((r) => (
                <tr key={`${r.folder}/${r.path}`}>
                  <td>
                    {r.folder}/{r.path}
                  </td>
                  <td>{r.reads}</td>
                  <td>{r.after_search}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <p>
        <button
          class="secondary"
          disabled={data.entries === 0}
          onClick={async () => {
            if (!confirm("Clear the whole query log?")) return;
            await send("DELETE", "/api/query-log").catch((e) => setNote(String(e)));
            setNote("Cleared.");
            reload();
          }}
        >
          Clear the log
        </button>{" "}
        <span class="muted small" role="status">
          {note}
        </span>
      </p>
    </section>
  );
}
