// The Markdown source editor: CodeMirror 6, loaded as its own chunk on the first Edit so the
// reading app stays small. `[[` completes document names (and `[[Name#` that document's
// headings); Ctrl/Cmd+S saves.
import {
  autocompletion,
  closeBrackets,
  type CompletionContext,
  type CompletionResult,
} from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { markdown } from "@codemirror/lang-markdown";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, placeholder } from "@codemirror/view";

export interface EditorOptions {
  text: string;
  onChange: (text: string) => void;
  onSave: () => void;
  /// Document names to offer after `[[`.
  documents: () => Promise<string[]>;
  /// The headings of the document named, for `[[Name#`.
  headings: (name: string) => Promise<string[]>;
}

export interface Editor {
  text(): string;
  setText(text: string): void;
  focus(): void;
  destroy(): void;
}

function wikilinks(options: EditorOptions) {
  return async (context: CompletionContext): Promise<CompletionResult | null> => {
    const before = context.matchBefore(/\[\[[^\]\n]*/);
    if (!before) return null;
    const inner = before.text.slice(2);
    const hash = inner.indexOf("#");
    if (hash >= 0) {
      const headings = await options.headings(inner.slice(0, hash));
      return {
        from: before.from + 2 + hash + 1,
        options: headings.map((h) => ({ label: h, type: "property", apply: `${h}]]` })),
      };
    }
    const names = await options.documents();
    return {
      from: before.from + 2,
      options: names.map((n) => ({ label: n, type: "text", apply: `${n}]]` })),
    };
  };
}

export function mountEditor(parent: HTMLElement, options: EditorOptions): Editor {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        // The page's CSP admits only <style> elements with this response's nonce.
        EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? ""),
        lineNumbers(),
        history(),
        closeBrackets(),
        markdown(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        EditorView.lineWrapping,
        placeholder("Write Markdown here…"),
        autocompletion({ override: [wikilinks(options)], activateOnTyping: true }),
        keymap.of([
          {
            key: "Mod-s",
            preventDefault: true,
            run: () => {
              options.onSave();
              return true;
            },
          },
          ...defaultKeymap,
          ...historyKeymap,
        ]),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    text: () => view.state.doc.toString(),
    setText: (text) =>
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
