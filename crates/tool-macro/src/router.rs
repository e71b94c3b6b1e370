//! `#[tools]` on an inherent `impl` block: each `#[tool(...)]` method in it is one tool, with no
//! holder struct or registration line written by hand.
//!
//! ```ignore
//! #[tools]
//! impl PersonalTools {
//!     #[tool(name = "create_task", title = "Create task", category = "tasks",
//!            effects = [TasksWrite], description = "Add a task to the to-do list.")]
//!     async fn create_task(&self, input: &CreateTaskInput, ctx: &ToolContext) -> ToolResult<Task> { … }
//! }
//! ```
//!
//! For every such method it writes, in a hidden module, a holder that owns a clone of the
//! provider (so the provider is `Clone`: it holds handles) and implements `Tool` by calling the
//! method; and on the provider `fn tool_list(&self)` (or the name given as `#[tools(list = …)]`)
//! with every tool, in the order written.
//!
//! The method takes `(&self, input: &In, [plan: &P,] [ctx: &ToolContext])`: the context (known
//! by its type) only where it is used, the plan only where the tool works one out. Effects that
//! depend on the input come from the function named as `plan = Self::plan_x`, a
//! `fn plan_x(&self, &In, &EffectEnv) -> Result<CallPlan<P>, ToolError>` (`P` is `()` when the
//! method takes no plan). `text`, `content` and `reveals` name functions of the output
//! (`fn(&Out) -> String`, `-> Vec<Content>`, `-> Vec<String>`).

use crate::{Args, Declaration, Hooks, contract, expand_declared};
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::{
    FnArg, GenericArgument, Ident, ImplItem, ImplItemFn, ItemImpl, PathArguments, ReturnType, Type,
    parse_quote,
};

/// The tool a `#[tool]` method declares, read from its attribute and signature.
struct Method {
    declared: Declaration,
    name: Ident,
    input: Type,
    output: Type,
    plan: Option<Type>,
    takes_context: bool,
}

pub fn expand(list: Option<Ident>, mut block: ItemImpl) -> syn::Result<Tokens> {
    let provider = (*block.self_ty).clone();
    let mut methods = Vec::new();
    for item in &mut block.items {
        if let ImplItem::Fn(f) = item
            && let Some(at) = f.attrs.iter().position(|a| a.path().is_ident("tool"))
        {
            let attr = f.attrs.remove(at);
            // The plan's type is the tool's (`PathBuf`, `Vec<…>`): the method takes it as given.
            f.attrs.push(syn::parse_quote!(#[allow(clippy::ptr_arg)]));
            let declared = Declaration::read(attr.parse_args::<Args>()?)?;
            methods.push(Method::read(declared, f)?);
        }
    }
    let Some(first) = methods.first() else {
        return Err(syn::Error::new_spanned(
            &block.self_ty,
            "#[tools]: no `#[tool(...)]` method in this block",
        ));
    };
    let module = format_ident!("__{}_tools", first.name);
    let holders = methods
        .iter()
        .map(|m| m.holder(&provider))
        .collect::<syn::Result<Vec<_>>>()?;
    let holder_names = methods.iter().map(Method::holder_name);
    let list = list.unwrap_or_else(|| Ident::new("tool_list", Span::call_site()));
    let c = contract();
    Ok(quote! {
        #block
        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #module {
            use super::*;
            #(#holders)*
        }
        impl #provider {
            /// Every tool this block declares, each holding a clone of the provider.
            pub fn #list(&self) -> ::std::vec::Vec<::std::sync::Arc<dyn #c::DynTool>> {
                ::std::vec![#(#c::typed(#module::#holder_names(::core::clone::Clone::clone(self)))),*]
            }
        }
    })
}

impl Method {
    fn read(declared: Declaration, f: &ImplItemFn) -> syn::Result<Self> {
        let wrong = |why: &str| syn::Error::new_spanned(&f.sig, format!("#[tool] method: {why}"));
        if f.sig.asyncness.is_none() {
            return Err(wrong("make it `async fn`"));
        }
        let mut args: Vec<&Type> = f
            .sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                FnArg::Typed(t) => Some(&*t.ty),
                FnArg::Receiver(_) => None,
            })
            .collect();
        // The context is known by its type, and left out by a method that does not use it.
        let takes_context = args.last().is_some_and(|ty| is_context(ty));
        if takes_context {
            args.pop();
        }
        let referent = |ty: &Type| match ty {
            Type::Reference(r) => Ok((*r.elem).clone()),
            _ => Err(wrong("take the input and the plan by reference")),
        };
        let (input, plan) = match args.as_slice() {
            [input] => (referent(input)?, None),
            [input, plan] => (referent(input)?, Some(referent(plan)?)),
            _ => {
                return Err(wrong(
                    "its arguments are `&self, &Input, [&Plan,] [&ToolContext]`",
                ));
            }
        };
        if plan.is_some() && declared.hooks.plan.is_none() {
            return Err(wrong(
                "a method that takes a plan names its maker as `plan = ...`",
            ));
        }
        Ok(Method {
            declared,
            name: f.sig.ident.clone(),
            input,
            output: ok_type(&f.sig.output).ok_or_else(|| wrong("return `ToolResult<Output>`"))?,
            plan,
            takes_context,
        })
    }

    fn holder_name(&self) -> Ident {
        let camel: String = self
            .name
            .to_string()
            .split('_')
            .map(|word| {
                let mut chars = word.chars();
                chars
                    .next()
                    .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                    .unwrap_or_default()
            })
            .collect();
        format_ident!("{camel}Tool")
    }

    /// The holder struct and its `impl Tool`.
    fn holder(&self, provider: &Type) -> syn::Result<Tokens> {
        let c = contract();
        let (holder, method, input, output) =
            (self.holder_name(), &self.name, &self.input, &self.output);
        let hooks = self.declared.hooks.resolved(provider);
        let mut items: Vec<ImplItem> = vec![
            parse_quote!(type Input = #input;),
            parse_quote!(type Output = #output;),
        ];
        // A maker without a plan argument makes a `CallPlan<()>`: effects from the input, no data.
        let unit: Type = parse_quote!(());
        let plan_type = self.plan.as_ref().unwrap_or(&unit);
        let call: ImplItem = match &hooks.plan {
            Some(maker) => {
                let plan = plan_type;
                items.push(parse_quote!(type Plan = #plan;));
                items.push(parse_quote! {
                    fn plan(&self, input: &#input, env: &#c::EffectEnv)
                        -> ::core::result::Result<#c::CallPlan<#plan>, #c::ToolError> {
                        #maker(&self.0, input, env)
                    }
                });
                let plan_arg = self.plan.as_ref().map(|_| quote!(plan,));
                let ctx_arg = self.takes_context.then(|| quote!(ctx));
                parse_quote! {
                    async fn call(&self, input: &#input, plan: &#plan, ctx: &#c::ToolContext)
                        -> ::core::result::Result<#output, #c::ToolError> {
                        let _ = (plan, ctx);
                        self.0.#method(input, #plan_arg #ctx_arg).await
                    }
                }
            }
            None => {
                let ctx_arg = self.takes_context.then(|| quote!(ctx));
                parse_quote! {
                    async fn call(&self, input: &#input, _: &(), ctx: &#c::ToolContext)
                        -> ::core::result::Result<#output, #c::ToolError> {
                        let _ = ctx;
                        self.0.#method(input, #ctx_arg).await
                    }
                }
            }
        };
        items.push(call);
        items.extend(hooks.output_fns(output));
        let mut block: ItemImpl = parse_quote!(impl #c::Tool for #holder { #(#items)* });
        let tool = expand_declared(self.declared.clone(), &mut block)?;
        Ok(quote! {
            pub struct #holder(pub #provider);
            #tool
        })
    }
}

impl Hooks {
    /// The hooks with a leading `Self` (the provider, where the attribute is written) spelled
    /// as the provider's type: inside the holder's `impl`, `Self` is the holder.
    fn resolved(&self, provider: &Type) -> Hooks {
        let resolve = |hook: &Option<Tokens>| {
            hook.as_ref().map(|tokens| {
                tokens
                    .clone()
                    .into_iter()
                    .flat_map(|token| match &token {
                        proc_macro2::TokenTree::Ident(id) if id == "Self" => quote!(<#provider>),
                        _ => quote!(#token),
                    })
                    .collect()
            })
        };
        Hooks {
            plan: resolve(&self.plan),
            text: resolve(&self.text),
            content: resolve(&self.content),
            reveals: resolve(&self.reveals),
        }
    }

    /// `to_text`, `content` and `reveals`, each where the attribute names a function for it.
    fn output_fns(&self, output: &Type) -> Vec<ImplItem> {
        let c = contract();
        let mut items = Vec::new();
        if let Some(text) = &self.text {
            items.push(
                parse_quote!(fn to_text(&self, output: &#output) -> String { #text(output) }),
            );
        }
        if let Some(content) = &self.content {
            items.push(parse_quote! {
                fn content(&self, output: &#output) -> ::std::vec::Vec<#c::Content> { #content(output) }
            });
        }
        if let Some(reveals) = &self.reveals {
            items.push(parse_quote! {
                fn reveals(&self, output: &#output) -> ::std::vec::Vec<String> { #reveals(output) }
            });
        }
        items
    }
}

/// `&ToolContext`, however its path is spelled.
fn is_context(ty: &Type) -> bool {
    let Type::Reference(r) = ty else {
        return false;
    };
    matches!(&*r.elem, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "ToolContext"))
}

/// `T` in `-> ToolResult<T>` or `-> Result<T, E>`.
fn ok_type(output: &ReturnType) -> Option<Type> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(path) = &**ty else {
        return None;
    };
    let PathArguments::AngleBracketed(args) = &path.path.segments.last()?.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(ok) => Some(ok.clone()),
        _ => None,
    }
}
