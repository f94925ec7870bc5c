// The app shell: sign-in, the status banner, the header with search, and the page the route
// names (router.tsx). Views live in views.tsx and doc.tsx.
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, get, onStatusMayChange, setToken, token, type Status } from "./api";
import { DocumentView } from "./doc";
import { Link, navigate, type Route, useRoute } from "./router";
import { ServerSettings, UsageView } from "./settings";
import { FolderList, FolderTree, SearchView } from "./views";
import "./style.css";

function SignIn(props: { wrong: boolean; onDone: () => void }) {
  const [value, setValue] = useState("");
  return (
    <main class="signin">
      <h1>ragdown</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setToken(value.trim());
          props.onDone();
        }}
      >
        <label for="token">Access token</label>
        <p class="hint">
          The value of <code>RAGDOWN_TOKEN</code> the server was started with. It is kept in this
          browser until you sign out.
        </p>
        {props.wrong && (
          <p class="error" role="alert">
            That token was refused. Check <code>RAGDOWN_TOKEN</code> and try again.
          </p>
        )}
        <input
          id="token"
          type="password"
          autocomplete="current-password"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          autofocus
        />
        <button type="submit" disabled={!value.trim()}>
          Sign in
        </button>
      </form>
    </main>
  );
}

function Banner(props: { status: Status }) {
  const s = props.status;
  if (s.ready && !s.syncing) return null;
  const p = s.progress;
  // The share done is counted in bytes, known before any file is read and moving within a
  // large one: the sections read so far would make a fraction whose whole keeps growing.
  const percent = p && p.bytes_total > 0 ? Math.floor((100 * Math.min(p.bytes_done, p.bytes_total)) / p.bytes_total) : null;
  return (
    <div class="banner" role="status">
      {!s.ready ? (
        "Loading the embedding model…"
      ) : p && p.files_total === 0 ? (
        // A first sync that has not counted the folder's files yet (it lists them first).
        "Indexing: listing the folder…"
      ) : p ? (
        <>
          Indexing: {percent !== null && `${percent}% done, `}
          {p.files_done} of {p.files_total} files read
          {p.sections_done > 0 && `, ${p.sections_done} sections indexed`}.{" "}
          {percent !== null && <progress max={100} value={percent} aria-label="Indexing progress" />}
        </>
      ) : (
        `Indexing… ${s.files ?? 0} files, ${s.chunks ?? 0} sections so far.`
      )}{" "}
      Search results may be incomplete.
    </div>
  );
}

function Header(props: { route: Route; status: Status; onSignOut: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState(props.route.kind === "search" ? props.route.query ?? "" : "");
  const folder = props.route.folder;
  const typing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const search = (value: string, replace: boolean) => {
    const params = new URLSearchParams({ q: value });
    if (folder) params.set("folder", folder);
    navigate(`/search?${params}`, replace);
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      if (e.key === "/" && !["INPUT", "TEXTAREA"].includes(target.tagName) && !target.isContentEditable) {
        e.preventDefault();
        input.current?.focus();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);
  return (
    <header class="top">
      <Link href="/" class="brand">
        ragdown
      </Link>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          clearTimeout(typing.current);
          search(text, false);
        }}
      >
        <input
          ref={input}
          type="search"
          name="q"
          placeholder={folder ? `Search ${folder} (press /)` : "Search every folder (press /)"}
          aria-label="Search"
          value={text}
          onInput={(e) => {
            const value = e.currentTarget.value;
            setText(value);
            // Search as you type: a pause of 250 ms runs it; one history entry per search page.
            clearTimeout(typing.current);
            if (value.trim().length >= 2) {
              typing.current = setTimeout(() => search(value, props.route.kind === "search"), 250);
            }
          }}
        />
      </form>
      <Link href="/settings" class="nav">
        Settings
      </Link>
      {props.status.read_only && <span class="badge" title="RAGDOWN_READ_ONLY is set: nothing can be written">read-only</span>}
      {props.status.auth_required && (
        <button class="link" onClick={props.onSignOut}>
          Sign out
        </button>
      )}
    </header>
  );
}

function App() {
  const route = useRoute();
  const [status, setStatus] = useState<Status | null>(null);
  const [signedIn, setSignedIn] = useState<"unknown" | "yes" | "no" | "wrong">("unknown");
  const [error, setError] = useState("");

  // Status needs no token; it says whether one is needed, and how far loading is. It is asked
  // every second while the server is busy, every 10 s otherwise (a CLI or an agent may start a
  // rebuild), and at once when this page changed something that re-indexes.
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let latest = 0;
    const poll = async () => {
      // Only the latest ask schedules the next, so an early ask never starts a second chain.
      const mine = ++latest;
      clearTimeout(timer);
      try {
        const s = await get<Status>("/api/status");
        if (stop || mine !== latest) return;
        setStatus(s);
        setError("");
        timer = setTimeout(poll, !s.ready || s.syncing ? 1000 : 10000);
      } catch (e) {
        if (stop || mine !== latest) return;
        setError(e instanceof Error ? e.message : String(e));
        timer = setTimeout(poll, 2000);
      }
    };
    poll();
    const forget = onStatusMayChange(poll);
    return () => {
      stop = true;
      clearTimeout(timer);
      forget();
    };
  }, []);

  // A token is checked once against a protected route.
  useEffect(() => {
    if (!status || signedIn !== "unknown") return;
    if (!status.auth_required) {
      setSignedIn("yes");
      return;
    }
    if (!token()) {
      setSignedIn("no");
      return;
    }
    get("/api/folders")
      .then(() => setSignedIn("yes"))
      .catch((e) => {
        if (e instanceof ApiError && e.status === 401) {
          setToken("");
          setSignedIn("wrong");
        } else setSignedIn("yes");
      });
  }, [status, signedIn]);

  if (!status) return <main class="loading">{error ? `The server does not answer: ${error}` : "Connecting…"}</main>;
  if (signedIn === "no" || signedIn === "wrong") {
    return <SignIn wrong={signedIn === "wrong"} onDone={() => setSignedIn("unknown")} />;
  }
  if (signedIn === "unknown") return <main class="loading">Signing in…</main>;
  const signOut = () => {
    setToken("");
    setSignedIn("no");
  };
  return (
    <>
      <Header route={route} status={status} onSignOut={signOut} />
      <Banner status={status} />
      <main class="page">
        {route.kind === "folders" && <FolderList status={status} />}
        {route.kind === "folder" && <FolderTree folder={route.folder!} status={status} />}
        {route.kind === "doc" && <DocumentView path={route.path!} anchor={route.anchor} readOnly={status.read_only} />}
        {route.kind === "search" && <SearchView query={route.query ?? ""} folder={route.folder} />}
        {route.kind === "settings" && <ServerSettings />}
        {route.kind === "usage" && <UsageView />}
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
