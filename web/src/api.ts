// The JSON /api, typed. Every call carries the bearer token in its header — never in a URL —
// so files (images) are fetched as blobs too. Shapes mirror the server's Serialize types.

const TOKEN_KEY = "ragdown.token";

export function token(): string {
  return localStorage.getItem(TOKEN_KEY) ?? "";
}

export function setToken(value: string): void {
  if (value) localStorage.setItem(TOKEN_KEY, value);
  else localStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

async function request(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  const t = token();
  if (t) headers["Authorization"] = `Bearer ${t}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    let code: string | undefined;
    try {
      const json = await response.json();
      if (typeof json.error === "string") message = json.error;
      if (typeof json.code === "string") code = json.code;
    } catch {
      // Not JSON: the status line says enough.
    }
    throw new ApiError(response.status, message, code);
  }
  return response;
}

export async function get<T>(path: string): Promise<T> {
  return (await request("GET", path)).json() as Promise<T>;
}

export async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await request(method, path, body)).json() as Promise<T>;
}

/// A file under /api/file as an object URL (the caller revokes it).
export async function fileUrl(path: string): Promise<string> {
  const response = await request("GET", `/api/file?path=${encodeURIComponent(path)}`);
  return URL.createObjectURL(await response.blob());
}

/// File types a browser shows without running anything in them: opened in a tab.
const VIEWABLE = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "image/bmp",
  "application/pdf",
  "text/plain",
];

/// Opens a file a document links to. A blob is a document of this app's origin, so one that
/// could run script — SVG, HTML, XML, anything not known to be inert — would read the token:
/// such files are saved (as bytes with no type a browser renders), never shown.
export async function openFile(path: string): Promise<void> {
  const response = await request("GET", `/api/file?path=${encodeURIComponent(path)}`);
  const blob = await response.blob();
  const type = blob.type.split(";")[0].trim().toLowerCase();
  if (VIEWABLE.includes(type)) {
    const url = URL.createObjectURL(blob);
    open(url, "_blank", "noopener");
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    return;
  }
  const url = URL.createObjectURL(new Blob([blob], { type: "application/octet-stream" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = path.split("/").pop() || "file";
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export const q = encodeURIComponent;

const STATUS_EVENT = "ragdown:status";

/// Says that the server may be busy now (a setting that re-embeds, a folder that re-indexes):
/// the status banner asks again at once instead of at its next idle poll.
export function statusMayChange(): void {
  window.dispatchEvent(new Event(STATUS_EVENT));
}

export function onStatusMayChange(listener: () => void): () => void {
  window.addEventListener(STATUS_EVENT, listener);
  return () => window.removeEventListener(STATUS_EVENT, listener);
}

export interface Status {
  ready: boolean;
  auth_required: boolean;
  read_only: boolean;
  version: string;
  folders?: number;
  files?: number;
  chunks?: number;
  syncing?: boolean;
  /// The running syncs' files read and sections indexed (a first index, a rebuild).
  progress?: {
    files_done: number;
    files_total: number;
    sections_done: number;
    sections_total: number;
    bytes_done: number;
    bytes_total: number;
  };
  embedder?: string | null;
  settings?: { root_mcp?: boolean };
}

export interface Folder {
  name: string;
  title: string;
  mcp: boolean;
  mcp_path: string;
  files: number;
  chunks: number;
  created_by?: string;
}

export interface Listed {
  folder?: string;
  path: string;
  title: string;
  description?: string | null;
  tags: string[];
  superseded_by: string[];
  mtime_ms: number;
  size: number;
}

export interface Heading {
  anchor: string;
  level: number;
  name: string;
  line: number;
  end_line: number;
}

export interface Rendered extends Listed {
  html: string;
  headings: Heading[];
  properties: { key: string; value: string }[];
  frontmatter_error?: string;
  converted_from: string | null;
  hash: string;
}

export interface Hit {
  folder?: string;
  path: string;
  title: string;
  heading: string;
  text: string;
  start_line: number;
  end_line: number;
  similarity: number;
  score: number;
  modified: string;
  tags: string[];
}

export interface Backlinks {
  path: string;
  backlinks: { path: string; title: string; lines: { line: number; text: string }[] }[];
}
