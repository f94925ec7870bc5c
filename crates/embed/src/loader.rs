//! [`load`]: the embedder the settings name — the hash embedder, an OpenAI-compatible
//! endpoint, a preset (its model downloaded on first use, its session built when first
//! needed) or a model directory — with the ONNX Runtime library found or fetched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{
    EmbedError, Embedder, EmbedderSettings, Preset, Result, download, external, hash, lazy, onnx,
    openai, preset, runtime,
};

/// The ONNX Runtime library: configured, installed, or downloaded once into the models folder.
fn onnx_runtime(settings: &EmbedderSettings, progress: &dyn download::Progress) -> Result<PathBuf> {
    runtime::locate_or_download(
        settings.ort_library.as_deref(),
        &settings.models_dir,
        &settings.ort_endpoint,
        progress,
    )
}

/// Loads the embedder `settings` names, downloading a preset's model on first use.
pub fn load(
    settings: &EmbedderSettings,
    progress: &dyn download::Progress,
) -> Result<Arc<dyn Embedder>> {
    match preset::resolve(&settings.name)? {
        preset::Choice::Hash => Ok(Arc::new(hash::HashEmbedder::new(384))),
        preset::Choice::OpenAi(model) => Ok(Arc::new(openai::OpenAiEmbedder::connect(
            &model,
            &settings.openai_url,
            settings.openai_key.as_deref(),
        )?)),
        preset::Choice::Local(preset) => {
            let library = onnx_runtime(settings, progress)?;
            let dir = download::ensure_preset(
                &preset,
                &settings.models_dir,
                &settings.hub_endpoint,
                progress,
            )?;
            // The files are here; the session (~0.3–0.5 s) is built when first needed.
            let (id, dim, min_score) = (preset.id.clone(), preset.dim, preset.min_score);
            let one_shot = settings.one_shot;
            let settings = settings.clone();
            let loader: lazy::Loader = Box::new(move |build| {
                // A preset's folder is ragdown's own: its weights can be split out to be
                // mapped rather than copied (see `external`).
                let model_file = external::model_for(&dir);
                let load = |file: &Path| {
                    onnx::OnnxEmbedder::load(file, &preset, &settings, &library, build)
                };
                let model = match load(&model_file) {
                    // Split files that no longer load (damaged on disk) never stop the model:
                    // the original loads, and the next load splits it again.
                    Err(EmbedError::ModelLoad { path, reason })
                        if path != dir.join("model.onnx") =>
                    {
                        tracing::warn!(
                            "{}: {reason}; loading model.onnx instead (it is split again next time)",
                            path.display()
                        );
                        external::forget(&dir);
                        load(&dir.join("model.onnx"))?
                    }
                    loaded => loaded?,
                };
                Ok(Arc::new(model) as Arc<dyn Embedder>)
            });
            Ok(Arc::new(lazy::LazyEmbedder::new(
                id, dim, min_score, one_shot, loader,
            )))
        }
        preset::Choice::Directory(dir) => {
            let library = onnx_runtime(settings, progress)?;
            let preset = Preset::for_directory(&dir);
            Ok(Arc::new(onnx::OnnxEmbedder::load(
                &dir.join("model.onnx"),
                &preset,
                settings,
                &library,
                lazy::Build::Full,
            )?))
        }
    }
}
