// A small history router over the app's URLs: `/` (folders), `/f/<folder>` (its tree),
// `/f/<folder>/<path>` (a document, `#anchor` a heading), `/search?q=&folder=`, `/settings`,
// `/settings/usage`. The server
// answers index.html for every such path, so deep links and reloads work.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

export interface Route {
  kind: "folders" | "folder" | "doc" | "search" | "settings" | "usage";
  folder?: string;
  path?: string;
  query?: string;
  anchor?: string;
}

export function parseRoute(): Route {
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const anchor = location.hash ? decodeURIComponent(location.hash.slice(1)) : undefined;
  if (parts[0] === "search") {
    const params = new URLSearchParams(location.search);
    return { kind: "search", query: params.get("q") ?? "", folder: params.get("folder") ?? undefined };
  }
  if (parts[0] === "settings") return { kind: parts[1] === "usage" ? "usage" : "settings" };
  if (parts[0] === "f" && parts.length === 2) return { kind: "folder", folder: parts[1] };
  if (parts[0] === "f" && parts.length > 2) {
    return { kind: "doc", folder: parts[1], path: parts.slice(1).join("/"), anchor };
  }
  return { kind: "folders" };
}

/// The app's URL of a document path (`work/notes/a.md`).
export function docUrl(path: string, anchor?: string): string {
  const url = "/f/" + path.split("/").map(encodeURIComponent).join("/");
  return anchor ? `${url}#${encodeURIComponent(anchor)}` : url;
}

const listeners = new Set<() => void>();

/// Asked before the app leaves a page (unsaved edits); `false` stays.
let leaveGuard: (() => boolean) | null = null;

export function setLeaveGuard(guard: (() => boolean) | null): void {
  leaveGuard = guard;
}

/// Goes to `url`; `replace` swaps the current history entry (search as you type keeps one).
export function navigate(url: string, replace = false): void {
  if (leaveGuard && !leaveGuard()) return;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  listeners.forEach((l) => l());
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parseRoute);
  useEffect(() => {
    const update = () => setRoute(parseRoute());
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return route;
}

/// In-app links: a click on `<a href="/…">` navigates without a page load.
export function Link(props: { href: string; class?: string; children: ComponentChildren }) {
  return (
    <a
      href={props.href}
      class={props.class}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

