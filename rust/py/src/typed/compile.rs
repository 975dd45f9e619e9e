//! IR to typed-validator nodes: the IR says what to accept, the side table says what to build.
use ahash::AHashMap;
use ferrotool_core::checks::{NumberCheck, StringCheck};
use ferrotool_core::ir::{Container, Field, Record, Root, RootType, StringValue, Type};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use serde_json::Value;

use crate::convert::value_to_python;

/// JSON kinds a node may accept, as bits, to route union members without trying each one.
pub(crate) mod mask {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOL: u8 = 2;
    pub(crate) const NUMBER: u8 = 4;
    pub(crate) const STRING: u8 = 8;
    pub(crate) const ARRAY: u8 = 16;
    pub(crate) const OBJECT: u8 = 32;
    pub(crate) const ALL: u8 = 63;
}

pub(crate) enum Node {
    Any,
    Null,
    Bool,
    Int(NumberCheck),
    Float(NumberCheck),
    Str(StringCheck),
    StrValue {
        value: StringValue,
        convert: Py<PyAny>,
    },
    /// `Literal` and `Enum`: each allowed JSON value with the Python object it becomes.
    Choice {
        values: Vec<(Value, Py<PyAny>)>,
        expected: String,
    },
    List {
        items: Box<Node>,
        container: Container,
        min: Option<u64>,
        max: Option<u64>,
    },
    Tuple {
        items: Vec<Node>,
    },
    Dict {
        values: Box<Node>,
        min: Option<u64>,
        max: Option<u64>,
    },
    Union {
        variants: Vec<(u8, Node)>,
        expected: String,
    },
    Record(usize),
    Model {
        name: String,
        validate_json: Py<PyAny>,
        validate_python: Py<PyAny>,
    },
}

/// How a record's fields become a Python value.
pub(crate) enum Build {
    /// A `dict` (keyword arguments, `TypedDict`).
    Dict,
    /// `cls(**fields)` (dataclass, `NamedTuple`).
    Call(Py<PyAny>),
    /// A plain dataclass, built the way its generated `__init__` would: `cls.__new__(cls)`, then
    /// `object.__setattr__` for each field in declaration order (a default when the input has
    /// none), then `__post_init__`.
    Dataclass {
        class: Py<PyType>,
        /// The `__init__` parameters, in order.
        fields: Vec<InitField>,
        post_init: bool,
    },
}

/// One parameter of a dataclass's generated `__init__`.
pub(crate) struct InitField {
    /// The attribute name, interned.
    pub(crate) key: Py<PyString>,
    /// The record field read from the input, by index.
    pub(crate) field: usize,
    /// The value when the input has none; `None` for a required field.
    pub(crate) default: Option<FieldDefault>,
}

/// How a missing dataclass field gets its value.
pub(crate) enum FieldDefault {
    Value(Py<PyAny>),
    Factory(Py<PyAny>),
}

/// `dataclasses.MISSING`, `_FIELD` and `_FIELD_CLASSVAR`, looked up once per interpreter.
///
/// Brittle: this uses private dataclass internals of `CPython`, which any Python release may
/// change without notice. `_FIELD` and `_FIELD_CLASSVAR` are compared with each field's
/// private `_field_type`, and [`dataclass_build`] also reads `__dataclass_params__` and the
/// generated `__init__`'s `co_filename` (`"<string>"`). If a name goes away, building a
/// validator for a dataclass raises `AttributeError`; if a value changes meaning, the checks
/// in `dataclass_build` may decline (records are then built by calling the class) or, worse,
/// accept a class they should not. The dataclass tests are the guard on each new Python.
static DATACLASS_MARKERS: pyo3::sync::PyOnceLock<[Py<PyAny>; 3]> = pyo3::sync::PyOnceLock::new();

fn dataclass_markers(py: Python<'_>) -> PyResult<[Bound<'_, PyAny>; 3]> {
    let markers = DATACLASS_MARKERS.get_or_try_init(py, || {
        let module = py.import("dataclasses")?;
        let get = |name: &str| module.getattr(name).map(Bound::unbind);
        Ok::<_, PyErr>([get("MISSING")?, get("_FIELD")?, get("_FIELD_CLASSVAR")?])
    })?;
    Ok(markers.each_ref().map(|marker| marker.bind(py).clone()))
}

/// The fast dataclass build when it is exactly equivalent to calling `cls(**fields)`: the
/// `__init__` is the generated one and its parameters are exactly the record's fields, `__new__`
/// is `object.__new__`, and fields are stored with `object.__setattr__` (the class keeps it, or
/// is frozen, whose `__init__` calls it directly).
fn dataclass_build(class: &Bound<'_, PyAny>, record: &Record) -> PyResult<Option<Build>> {
    let py = class.py();
    let Ok(class) = class.cast::<PyType>() else {
        return Ok(None);
    };
    let init = class.getattr(pyo3::intern!(py, "__init__"))?;
    let generated = init
        .getattr(pyo3::intern!(py, "__code__"))
        .and_then(|code| code.getattr(pyo3::intern!(py, "co_filename")))
        .and_then(|name| name.extract::<String>())
        .is_ok_and(|name| name == "<string>");
    if !generated {
        return Ok(None);
    }
    let object = py.get_type::<PyAny>();
    if !class
        .getattr(pyo3::intern!(py, "__new__"))?
        .is(&object.getattr(pyo3::intern!(py, "__new__"))?)
    {
        return Ok(None);
    }
    let frozen = class
        .getattr(pyo3::intern!(py, "__dataclass_params__"))
        .and_then(|params| params.getattr(pyo3::intern!(py, "frozen")))
        .and_then(|frozen| frozen.is_truthy())
        .unwrap_or(false);
    if !frozen
        && !class
            .getattr(pyo3::intern!(py, "__setattr__"))?
            .is(&object.getattr(pyo3::intern!(py, "__setattr__"))?)
    {
        return Ok(None);
    }
    let [missing, field_kind, class_var_kind] = dataclass_markers(py)?;
    let mut fields = Vec::with_capacity(record.fields.len());
    for field in class
        .getattr(pyo3::intern!(py, "__dataclass_fields__"))?
        .call_method0(pyo3::intern!(py, "values"))?
        .try_iter()?
    {
        let field = field?;
        let kind = field.getattr(pyo3::intern!(py, "_field_type"))?;
        // A class variable is no parameter of `__init__`.
        if kind.is(&class_var_kind) {
            continue;
        }
        // `InitVar` and `init=False` fields are handled by `__init__` in ways not mirrored here.
        if !kind.is(&field_kind) || !field.getattr(pyo3::intern!(py, "init"))?.is_truthy()? {
            return Ok(None);
        }
        let name: String = field.getattr(pyo3::intern!(py, "name"))?.extract()?;
        let Some(index) = record.fields.iter().position(|field| field.name == name) else {
            return Ok(None);
        };
        let default = field.getattr(pyo3::intern!(py, "default"))?;
        let factory = field.getattr(pyo3::intern!(py, "default_factory"))?;
        let default = if !default.is(&missing) {
            Some(FieldDefault::Value(default.unbind()))
        } else if !factory.is(&missing) {
            Some(FieldDefault::Factory(factory.unbind()))
        } else {
            None
        };
        fields.push(InitField {
            key: PyString::intern(py, &name).unbind(),
            field: index,
            default,
        });
    }
    // Every input field must be a parameter, once.
    if fields.len() != record.fields.len() {
        return Ok(None);
    }
    let post_init = class.hasattr(pyo3::intern!(py, "__post_init__"))?;
    Ok(Some(Build::Dataclass {
        class: class.clone().unbind(),
        fields,
        post_init,
    }))
}

pub(crate) struct FieldNode {
    pub(crate) name: Box<str>,
    /// The key as JSON text, quotes included, when it is written without escapes (no `"`,
    /// `\` or control character in the name): what a reader of raw text may compare bytes with.
    pub(crate) spelled: Option<Box<[u8]>>,
    pub(crate) key: Py<PyString>,
    pub(crate) node: Node,
    pub(crate) required: bool,
}

pub(crate) struct RecordNode {
    pub(crate) name: String,
    pub(crate) fields: Vec<FieldNode>,
    /// Used instead of a linear scan when the record has many fields.
    pub(crate) lookup: Option<AHashMap<Box<str>, usize>>,
    pub(crate) build: Build,
    pub(crate) closed: bool,
    pub(crate) required_count: usize,
    /// The required fields as bits (by index), for records of at most 64 fields.
    pub(crate) required_mask: u64,
    /// `only the properties a, b, c`, for unexpected-property errors.
    pub(crate) allowed: String,
}

impl RecordNode {
    pub(crate) fn field_index(&self, key: &str) -> Option<usize> {
        match &self.lookup {
            Some(lookup) => lookup.get(key).copied(),
            None => self.fields.iter().position(|field| &*field.name == key),
        }
    }

    /// The index of the field named `key`, trying the field at `expected` first.
    #[inline]
    pub(crate) fn field_after(&self, expected: usize, key: &str) -> Option<usize> {
        match self.fields.get(expected) {
            Some(field) if &*field.name == key => Some(expected),
            _ => self.field_index(key),
        }
    }
}

pub(crate) struct Compiled {
    pub(crate) root: Node,
    pub(crate) records: Vec<RecordNode>,
}

const LOOKUP_THRESHOLD: usize = 8;
/// Allowed property names listed in an `unexpected_property` error before `...`.
const MAX_NAMES: usize = 8;

struct Compiler<'a, 'py> {
    py: Python<'py>,
    ir: &'a Root,
    objects: &'a Bound<'py, PyDict>,
    records: Vec<Option<RecordNode>>,
    record_index: AHashMap<String, usize>,
}

fn schema_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// Compiles an IR document. `objects` maps def/enum/model names to `(style, class)`.
pub(crate) fn compile(
    py: Python<'_>,
    ir: &Root,
    objects: &Bound<'_, PyDict>,
) -> PyResult<Compiled> {
    let mut compiler = Compiler {
        py,
        ir,
        objects,
        records: Vec::new(),
        record_index: AHashMap::new(),
    };
    let root = match &ir.root {
        RootType::Function { record, .. } => {
            let index = compiler.reserve(&record.name);
            let node = compiler.record(record, Build::Dict)?;
            compiler.records[index] = Some(node);
            Node::Record(index)
        }
        RootType::Type { ty } => compiler.node(ty)?,
    };
    let records = compiler
        .records
        .into_iter()
        .enumerate()
        .map(|(index, record)| {
            record.ok_or_else(|| {
                schema_error(format!("record #{index} was referenced but never defined"))
            })
        })
        .collect::<PyResult<_>>()?;
    Ok(Compiled { root, records })
}

impl<'py> Compiler<'_, 'py> {
    fn reserve(&mut self, name: &str) -> usize {
        let index = self.records.len();
        self.records.push(None);
        self.record_index.insert(name.to_owned(), index);
        index
    }

    fn object(&self, name: &str, style: &str) -> PyResult<Bound<'py, PyAny>> {
        let entry = self
            .objects
            .get_item(name)?
            .ok_or_else(|| schema_error(format!("no Python object registered for {name:?}")))?;
        let pair = entry.cast::<PyTuple>().map_err(PyErr::from)?;
        let found_style: String = pair.get_item(0)?.extract()?;
        if found_style != style {
            return Err(schema_error(format!(
                "{name:?} is a {found_style}, expected a {style}"
            )));
        }
        pair.get_item(1)
    }

    fn record(&mut self, record: &Record, build: Build) -> PyResult<RecordNode> {
        let fields = record
            .fields
            .iter()
            .map(|field| self.field(field))
            .collect::<PyResult<Vec<_>>>()?;
        let lookup = (fields.len() > LOOKUP_THRESHOLD).then(|| {
            fields
                .iter()
                .enumerate()
                .map(|(index, field)| (field.name.clone(), index))
                .collect()
        });
        let required_count = fields.iter().filter(|field| field.required).count();
        let required_mask = fields
            .iter()
            .take(64)
            .enumerate()
            .filter(|(_, field)| field.required)
            .fold(0u64, |mask, (index, _)| mask | 1u64 << index);
        let allowed = if fields.is_empty() {
            "no other properties".to_owned()
        } else {
            let names: Vec<String> = fields
                .iter()
                .take(MAX_NAMES)
                .map(|field| format!("{:?}", &*field.name))
                .collect();
            let more = if fields.len() > MAX_NAMES {
                ", ..."
            } else {
                ""
            };
            format!("one of the properties {}{more}", names.join(", "))
        };
        Ok(RecordNode {
            allowed,
            name: record.name.clone(),
            fields,
            lookup,
            build,
            closed: record.closed,
            required_count,
            required_mask,
        })
    }

    fn field(&mut self, field: &Field) -> PyResult<FieldNode> {
        let plain = !field
            .name
            .bytes()
            .any(|byte| byte == b'"' || byte == b'\\' || byte < 0x20);
        Ok(FieldNode {
            name: field.name.clone().into_boxed_str(),
            spelled: plain.then(|| {
                format!("\"{}\"", field.name)
                    .into_bytes()
                    .into_boxed_slice()
            }),
            key: PyString::intern(self.py, &field.name).unbind(),
            node: self.node(&field.ty)?,
            required: field.required,
        })
    }

    fn reference(&mut self, name: &str) -> PyResult<usize> {
        if let Some(index) = self.record_index.get(name) {
            return Ok(*index);
        }
        let record = self
            .ir
            .defs
            .get(name)
            .ok_or_else(|| schema_error(format!("reference to undefined record {name:?}")))?;
        let index = self.reserve(name);
        let (style, class) = {
            let entry = self
                .objects
                .get_item(name)?
                .ok_or_else(|| schema_error(format!("no Python object registered for {name:?}")))?;
            let pair = entry.cast::<PyTuple>().map_err(PyErr::from)?;
            (pair.get_item(0)?.extract::<String>()?, pair.get_item(1)?)
        };
        let build = match style.as_str() {
            "typeddict" => Build::Dict,
            "dataclass" => match dataclass_build(&class, record)? {
                Some(build) => build,
                None => Build::Call(class.unbind()),
            },
            "namedtuple" | "class" => Build::Call(class.unbind()),
            other => {
                return Err(schema_error(format!(
                    "{name:?} has unknown record style {other:?}"
                )));
            }
        };
        let node = self.record(record, build)?;
        self.records[index] = Some(node);
        Ok(index)
    }

    fn node(&mut self, ty: &Type) -> PyResult<Node> {
        let py = self.py;
        Ok(match ty {
            Type::Any => Node::Any,
            Type::Null => Node::Null,
            Type::Bool => Node::Bool,
            Type::Int { bounds } => Node::Int(NumberCheck::new(bounds)),
            Type::Float { bounds } => Node::Float(NumberCheck::new(bounds)),
            Type::Str { bounds } => Node::Str(StringCheck::new(bounds).map_err(schema_error)?),
            Type::StrValue { value } => Node::StrValue {
                value: *value,
                convert: converter(py, *value)?,
            },
            Type::Literal { values } => Node::Choice {
                values: values
                    .iter()
                    .map(|value| Ok((value.clone(), value_to_python(py, value)?.unbind())))
                    .collect::<PyResult<_>>()?,
                expected: expected_choice(values),
            },
            Type::Enum { name, values, .. } => {
                let class = self.object(name, "enum")?;
                Node::Choice {
                    values: values
                        .iter()
                        .map(|value| {
                            Ok((
                                value.clone(),
                                class.call1((value_to_python(py, value)?,))?.unbind(),
                            ))
                        })
                        .collect::<PyResult<_>>()?,
                    expected: expected_choice(values),
                }
            }
            Type::List {
                items,
                container,
                size,
            } => Node::List {
                items: Box::new(self.node(items)?),
                container: *container,
                min: size.min,
                max: size.max,
            },
            Type::Tuple { items } => Node::Tuple {
                items: items
                    .iter()
                    .map(|item| self.node(item))
                    .collect::<PyResult<_>>()?,
            },
            Type::Dict { values, size } => Node::Dict {
                values: Box::new(self.node(values)?),
                min: size.min,
                max: size.max,
            },
            Type::Union { variants } => {
                let mut compiled = Vec::with_capacity(variants.len());
                let mut names = Vec::with_capacity(variants.len());
                for variant in variants {
                    names.push(describe_type(variant));
                    let node = self.node(variant)?;
                    compiled.push((node_mask(&node), node));
                }
                Node::Union {
                    variants: compiled,
                    expected: names.join(" or "),
                }
            }
            Type::Ref { name } => Node::Record(self.reference(name)?),
            Type::Model { name, .. } => {
                let class = self.object(name, "model")?;
                Node::Model {
                    name: name.clone(),
                    validate_json: class.getattr("model_validate_json")?.unbind(),
                    validate_python: class.getattr("model_validate")?.unbind(),
                }
            }
            Type::Annotated { inner, .. } => self.node(inner)?,
        })
    }
}

/// JSON kinds a node may accept.
fn node_mask(node: &Node) -> u8 {
    use mask::{ALL, ARRAY, BOOL, NULL, NUMBER, OBJECT, STRING};
    match node {
        Node::Any | Node::Model { .. } => ALL,
        Node::Null => NULL,
        Node::Bool => BOOL,
        Node::Int(_) | Node::Float(_) => NUMBER,
        Node::Str(_) | Node::StrValue { .. } => STRING,
        Node::Choice { values, .. } => values.iter().fold(0, |bits, (value, _)| {
            bits | match value {
                Value::Null => NULL,
                Value::Bool(_) => BOOL,
                Value::Number(_) => NUMBER,
                Value::String(_) => STRING,
                Value::Array(_) => ARRAY,
                Value::Object(_) => OBJECT,
            }
        }),
        Node::List { .. } | Node::Tuple { .. } => ARRAY,
        Node::Dict { .. } | Node::Record(_) => OBJECT,
        Node::Union { variants, .. } => variants.iter().fold(0, |bits, (mask, _)| bits | mask),
    }
}

fn converter(py: Python<'_>, value: StringValue) -> PyResult<Py<PyAny>> {
    let (module, path): (&str, &[&str]) = match value {
        StringValue::Datetime => ("datetime", &["datetime", "fromisoformat"]),
        StringValue::Date => ("datetime", &["date", "fromisoformat"]),
        StringValue::Time => ("datetime", &["time", "fromisoformat"]),
        StringValue::Timedelta => ("datetime", &["timedelta"]),
        StringValue::Uuid => ("uuid", &["UUID"]),
        StringValue::Decimal => ("decimal", &["Decimal"]),
        StringValue::Path => ("pathlib", &["Path"]),
    };
    let mut object = py.import(module)?.into_any();
    for name in path {
        object = object.getattr(*name)?;
    }
    Ok(object.unbind())
}

/// `one of "a", "b"` for a choice of values: at most `MAX_NAMES` of them are named, so a
/// `Literal` of thousands of members gives a message of a few lines, not of kilobytes.
fn expected_choice(values: &[Value]) -> String {
    if let [single] = values {
        return single.to_string();
    }
    let named: Vec<String> = values
        .iter()
        .take(MAX_NAMES)
        .map(Value::to_string)
        .collect();
    let more = values.len().saturating_sub(MAX_NAMES);
    if more == 0 {
        format!("one of {}", named.join(", "))
    } else {
        format!("one of {}, ... ({more} more)", named.join(", "))
    }
}

/// A short name of a type for messages (`integer`, `array`, `Customer`).
pub(crate) fn describe_type(ty: &Type) -> String {
    match ty {
        Type::Any => "any value".to_owned(),
        Type::Null => "null".to_owned(),
        Type::Bool => "boolean".to_owned(),
        Type::Int { .. } => "integer".to_owned(),
        Type::Float { .. } => "number".to_owned(),
        Type::Str { .. } | Type::StrValue { .. } => "string".to_owned(),
        Type::Literal { values } | Type::Enum { values, .. } => expected_choice(values),
        Type::List { .. } | Type::Tuple { .. } => "array".to_owned(),
        Type::Dict { .. } => "object".to_owned(),
        Type::Union { variants } => variants
            .iter()
            .map(describe_type)
            .collect::<Vec<_>>()
            .join(" or "),
        Type::Ref { name } | Type::Model { name, .. } => format!("object ({name})"),
        Type::Annotated { inner, .. } => describe_type(inner),
    }
}
