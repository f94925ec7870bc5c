//! The `/api` routes the web UI uses, and the router that puts them, `/mcp…` and the fallbacks
//! together. Every route is declared once in [`api_routes`], which also decides whether it
//! needs the token: a route cannot be added without saying so (a test walks the table).
//!
//! Paths in `/api` include the folder (`work/notes/a.md`); handlers split it off, then call the
//! `server` crate's documents code on that folder's engine, off the async executor. Writes
//! answer after the index has synced.

mod documents;
mod folders;
mod search;
mod status;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::routing::{MethodRouter, any, get};

use crate::policy::{MAX_BODY, MAX_UPLOAD};
use crate::{ApiError, AppState, mcp_routes};

/// One declared route.
pub struct ApiRoute {
    pub path: &'static str,
    pub methods: &'static [Method],
    /// `false` only for `GET /api/status`.
    pub needs_token: bool,
    pub handler: MethodRouter<AppState>,
}

fn route(
    path: &'static str,
    methods: &'static [Method],
    handler: MethodRouter<AppState>,
) -> ApiRoute {
    ApiRoute {
        path,
        methods,
        needs_token: true,
        handler,
    }
}

/// Every route of `/api` and `/mcp`, with its methods.
pub fn api_routes() -> Vec<ApiRoute> {
    use axum::routing::{patch, post};
    vec![
        ApiRoute {
            path: "/api/status",
            methods: &[Method::GET],
            needs_token: false,
            handler: get(status::status),
        },
        route(
            "/api/folders",
            &[Method::GET, Method::POST],
            get(folders::list_folders).post(folders::create_folder),
        ),
        route(
            "/api/folders/{name}",
            &[Method::PATCH, Method::DELETE],
            patch(folders::patch_folder).delete(folders::delete_folder),
        ),
        route(
            "/api/settings",
            &[Method::PATCH],
            patch(status::patch_settings),
        ),
        route(
            "/api/query-log",
            &[Method::GET, Method::DELETE],
            get(status::query_log).delete(status::clear_query_log),
        ),
        route(
            "/api/loose",
            &[Method::POST, Method::DELETE],
            post(folders::adopt_loose).delete(folders::delete_loose),
        ),
        route("/api/docs", &[Method::GET], get(documents::list_docs)),
        route(
            "/api/doc",
            &[Method::GET, Method::POST, Method::DELETE],
            get(documents::read_doc)
                .post(documents::write_doc)
                .delete(documents::delete_doc)
                .layer(DefaultBodyLimit::max(MAX_UPLOAD)),
        ),
        route("/api/search", &[Method::GET], get(search::search)),
        route("/api/resolve", &[Method::GET], get(documents::resolve)),
        route(
            "/api/move",
            &[Method::POST],
            post(documents::move_doc).layer(DefaultBodyLimit::max(MAX_UPLOAD)),
        ),
        route("/api/backlinks", &[Method::GET], get(documents::backlinks)),
        route(
            "/api/render",
            &[Method::GET, Method::POST],
            get(crate::rendering::render)
                .post(crate::rendering::render_draft)
                .layer(DefaultBodyLimit::max(MAX_UPLOAD)),
        ),
        route("/api/file", &[Method::GET], get(documents::file)),
        route(
            "/mcp",
            &[Method::GET, Method::POST, Method::DELETE],
            any(mcp_routes::mcp),
        ),
        route(
            "/mcp/{*scope}",
            &[Method::GET, Method::POST, Method::DELETE],
            any(mcp_routes::mcp),
        ),
    ]
}

async fn not_found() -> ApiError {
    ApiError::not_found("Not found")
}

async fn no_oauth() -> ApiError {
    ApiError::not_found(
        "Not found: ragdown has no OAuth. Send the server's token as the header \
         Authorization: Bearer <RAGDOWN_TOKEN>",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed")
}

pub fn router(state: AppState) -> Router {
    let mut open = Router::new();
    let mut protected = Router::new();
    for r in api_routes() {
        if r.needs_token {
            protected = protected.route(r.path, r.handler);
        } else {
            open = open.route(r.path, r.handler);
        }
    }
    // `route_layer`: auth runs for matched routes only, so an unknown /api path is a 404 before
    // auth, as upstream.
    let protected = protected.route_layer(axum::middleware::from_fn_with_state(
        state.clone(),
        crate::guard::require_token,
    ));
    let keep_alive = state.config.keep_alive_ms;
    let guard = axum::middleware::from_fn_with_state(state.clone(), crate::guard::check);
    open.merge(protected)
        .route("/api", any(not_found))
        .route("/api/{*rest}", any(not_found))
        // OAuth discovery (`oauth-protected-resource`, `oauth-authorization-server`, …): JSON,
        // not the web app's page, so such a client reports plainly that there is none.
        .route("/.well-known/{*rest}", any(no_oauth))
        .fallback(crate::ui::serve)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::map_response(
            move |mut response: Response| async move {
                if keep_alive > 0
                    && let Ok(v) =
                        HeaderValue::from_str(&format!("timeout={}", keep_alive.div_ceil(1000)))
                {
                    response.headers_mut().insert("keep-alive", v);
                }
                response
            },
        ))
        // Outermost: a cross-site or trickling request is refused before anything else runs.
        .layer(guard)
        .with_state(state)
}
