//! `#[tool(...)]` on an `impl Tool for X` block: the one place a typed tool states what it is.
//!
//! ```ignore
//! #[tool(name = "create_task", title = "Create task", category = "tasks", effects = [TasksWrite],
//!        description = "Add a task to the to-do list.")]
//! impl Tool for CreateTask {
//!     type Input = CreateTaskInput;
//!     type Output = Task;
//!     async fn call(&self, input: &CreateTaskInput, _: &(), ctx: &ToolContext) -> ToolResult<Task> { … }
//! }
//! ```
//!
//! It writes `fn meta` from the arguments and, when the block leaves them out, `type Plan = ()`
//! and a `fn plan` whose effects are the declared kinds (each must then be a field-less effect,
//! like `TasksWrite`: a tool whose effects depend on its input writes `fn plan` itself). The block
//! keeps everything else, so a reader sees the whole tool in one place.
//!
//! Why a macro rather than a builder: the declaration is data the gate checks (declared kinds vs.
//! the plan's), and a builder would still leave `meta`, `Plan` and `plan` to write in every tool.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, ImplItem, ItemImpl, Token, bracketed, parse_macro_input};

mod router;

/// One `key = value` or bare `flag` inside `#[tool(...)]`.
enum Arg {
    Value(Ident, Box<Expr>),
    Flag(Ident),
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            if key == "effects" {
                // Bare kind names, `[FsRead, FsWrite]`, read as an array of paths.
                let content;
                bracketed!(content in input);
                let kinds = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                let kinds = kinds.into_iter();
                return Ok(Arg::Value(key, Box::new(syn::parse_quote!([#(#kinds),*]))));
            }
            Ok(Arg::Value(key, Box::new(input.parse()?)))
        } else {
            Ok(Arg::Flag(key))
        }
    }
}

struct Args(Punctuated<Arg, Token![,]>);

/// `#[tools]` or `#[tools(list = name)]`.
struct ListName(Option<Ident>);

impl Parse for ListName {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Ok(ListName(None));
        }
        let key: Ident = input.parse()?;
        if key != "list" {
            return Err(syn::Error::new(key.span(), "#[tools]: only `list = name`"));
        }
        input.parse::<Token![=]>()?;
        Ok(ListName(Some(input.parse()?)))
    }
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Ok(Args(Punctuated::parse_terminated(input)?))
    }
}

#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(attr as Args);
    let mut block = parse_macro_input!(item as ItemImpl);
    match expand(args, &mut block) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// See [`router`]: every `#[tool(...)]` method of an inherent block is a tool.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    let ListName(list) = parse_macro_input!(attr as ListName);
    let block = parse_macro_input!(item as ItemImpl);
    match router::expand(list, block) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(args: Args, block: &mut ItemImpl) -> syn::Result<Tokens> {
    let declared = Declaration::read(args)?;
    if let Some(hook) = declared.hooks.any() {
        return Err(syn::Error::new_spanned(
            hook,
            "#[tool]: `plan`, `text`, `content` and `reveals` name functions only on a method in \
             a `#[tools]` block; in an `impl Tool`, write the function itself",
        ));
    }
    expand_declared(declared, block)
}

fn expand_declared(declared: Declaration, block: &mut ItemImpl) -> syn::Result<Tokens> {
    let meta = declared.meta_fn()?;
    add_items(block, meta, &declared.kinds)?;
    let c = contract();
    Ok(quote! {
        #[#c::async_trait]
        #block
    })
}

/// The path every generated item names its types by.
fn contract() -> Tokens {
    quote!(::cowork_contract)
}

/// Functions a `#[tools]` method names for its plan and its output's text, content and reveals.
#[derive(Clone, Default)]
struct Hooks {
    plan: Option<Tokens>,
    text: Option<Tokens>,
    content: Option<Tokens>,
    reveals: Option<Tokens>,
}

impl Hooks {
    fn any(&self) -> Option<&Tokens> {
        [&self.plan, &self.text, &self.content, &self.reveals]
            .into_iter()
            .find_map(Option::as_ref)
    }
}

/// What the attribute says about the tool, sorted by where it goes in `fn meta`.
#[derive(Clone, Default)]
struct Declaration {
    name: Option<Box<Expr>>,
    title: Option<Box<Expr>>,
    description: Option<Box<Expr>>,
    kinds: Vec<Ident>,
    /// Calls chained onto `ToolMeta::new(...)`, in the order the attribute gives them.
    builder: Vec<Tokens>,
    flags: Vec<Ident>,
    annotations: Option<Tokens>,
    hooks: Hooks,
}

impl Declaration {
    fn read(args: Args) -> syn::Result<Self> {
        let mut declared = Declaration::default();
        for arg in args.0 {
            match arg {
                Arg::Value(key, value) => declared.value(key, value)?,
                Arg::Flag(flag) => declared.flag(flag)?,
            }
        }
        Ok(declared)
    }

    fn value(&mut self, key: Ident, value: Box<Expr>) -> syn::Result<()> {
        match key.to_string().as_str() {
            "name" => self.name = Some(value),
            "title" => self.title = Some(value),
            "description" => self.description = Some(value),
            "category" => self.builder.push(quote!(.category(#value))),
            "aliases" => self.builder.push(quote!(.aliases(&#value))),
            "arg_aliases" => self.builder.push(quote!(.arg_aliases(&#value))),
            "secret_args" => self.builder.push(quote!(.secret_args(&#value))),
            "timeout" => self.builder.push(quote!(.timeout(#value))),
            "annotations" => self.annotations = Some(quote!(#value)),
            "rate_limit" => self.builder.push(quote!(.rate_limit #value)),
            "plan" => self.hooks.plan = Some(quote!(#value)),
            "text" => self.hooks.text = Some(quote!(#value)),
            "content" => self.hooks.content = Some(quote!(#value)),
            "reveals" => self.hooks.reveals = Some(quote!(#value)),
            "effects" => {
                let Expr::Array(array) = *value else {
                    unreachable!("parsed as an array above")
                };
                for kind in array.elems {
                    let Expr::Path(path) = kind else {
                        unreachable!("parsed as identifiers above")
                    };
                    self.kinds
                        .push(path.path.get_ident().cloned().expect("an identifier"));
                }
            }
            other => {
                return Err(syn::Error::new(
                    key.span(),
                    format!("#[tool]: unknown argument `{other}`"),
                ));
            }
        }
        Ok(())
    }

    fn flag(&mut self, flag: Ident) -> syn::Result<()> {
        match flag.to_string().as_str() {
            "read_only" | "destructive" | "idempotent" | "open_world" | "undoable" => {
                self.flags.push(flag)
            }
            "deferred" => self.builder.push(quote!(.deferred())),
            other => {
                return Err(syn::Error::new(
                    flag.span(),
                    format!("#[tool]: unknown flag `{other}`"),
                ));
            }
        }
        Ok(())
    }

    /// `fn meta`, once the attribute has everything it needs.
    fn meta_fn(&self) -> syn::Result<ImplItem> {
        let c = contract();
        let missing = |what: &str| {
            syn::Error::new(
                proc_macro2::Span::call_site(),
                format!("#[tool] needs `{what} = ...`"),
            )
        };
        let name = self.name.as_ref().ok_or_else(|| missing("name"))?;
        let title = self.title.as_ref().ok_or_else(|| missing("title"))?;
        let description = self
            .description
            .as_ref()
            .ok_or_else(|| missing("description"))?;
        if self.annotations.is_some() && !self.flags.is_empty() {
            return Err(syn::Error::new(
                self.flags[0].span(),
                "#[tool]: give `annotations = ...` or flags, not both",
            ));
        }
        let flags = &self.flags;
        let annotations = self.annotations.clone().unwrap_or_else(
            || quote!(#c::Annotations { #(#flags: true,)* ..::core::default::Default::default() }),
        );
        let (builder, kinds) = (&self.builder, &self.kinds);
        Ok(syn::parse_quote! {
            fn meta(&self) -> #c::ToolMeta {
                #c::ToolMeta::new(#name, #title, #description)
                    #(#builder)*
                    .annotations(#annotations)
                    .effects(&[#(#c::EffectKind::#kinds),*])
            }
        })
    }
}

/// Adds `fn meta` to the block, and `type Plan = ()` and `fn plan` where the block leaves them
/// out.
fn add_items(block: &mut ItemImpl, meta: ImplItem, kinds: &[Ident]) -> syn::Result<()> {
    let c = contract();
    let has_type = |wanted: &str| {
        block
            .items
            .iter()
            .any(|item| matches!(item, ImplItem::Type(t) if t.ident == wanted))
    };
    let has_fn = |wanted: &str| {
        block
            .items
            .iter()
            .any(|item| matches!(item, ImplItem::Fn(f) if f.sig.ident == wanted))
    };
    if has_fn("meta") {
        return Err(syn::Error::new_spanned(
            &block.self_ty,
            "#[tool] writes `fn meta`: state it in the attribute instead",
        ));
    }
    let wrote_plan_type = has_type("Plan");
    let wrote_plan = has_fn("plan");
    let mut added: Vec<ImplItem> = vec![meta];
    if !wrote_plan_type {
        added.push(syn::parse_quote!(
            type Plan = ();
        ));
    }
    if !wrote_plan {
        if wrote_plan_type {
            return Err(syn::Error::new_spanned(
                &block.self_ty,
                "#[tool]: a tool with its own `type Plan` writes `fn plan`",
            ));
        }
        added.push(syn::parse_quote! {
            fn plan(
                &self,
                _input: &Self::Input,
                _env: &#c::EffectEnv,
            ) -> ::core::result::Result<#c::CallPlan, #c::ToolError> {
                Ok(#c::CallPlan::new(vec![#(#c::Effect::#kinds),*]))
            }
        });
    }
    block.items.extend(added);
    Ok(())
}
