//! Decoding a kept subtree whole, when an edit or a reader needs all of it.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

/// A value decoded whole, to what `Value::deserialize` gives, except that
/// an object's members are gathered and its map built in one pass
/// (`BTreeMap`'s bulk build, a stable sort that finds sorted keys sorted,
/// the last of repeated keys kept as an insert would keep it) instead of
/// searched once per member: Kubernetes writes map keys sorted, and in wasm
/// a search per key costs far more than natively.
pub(super) struct Whole;

/// The key serde_json reads a map opening with as a raw value written as
/// a string (`Value::deserialize` does, with the `raw_value` feature).
/// From this many members on, an object's map is built in one pass.
const BULK_FROM: usize = 12;

const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> DeserializeSeed<'de> for Whole {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(Whole)
    }
}

impl<'de> Visitor<'de> for Whole {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Whole)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(Map::new()));
        };
        if first == RAW_VALUE_TOKEN {
            let text: String = map.next_value()?;
            return serde_json::from_str(&text).map_err(de::Error::custom);
        }
        // Small objects (most of them) are inserted into as they come; the
        // bulk build pays off from a dozen members or so.
        let mut object = Map::new();
        object.insert(first, map.next_value_seed(Whole)?);
        while object.len() < BULK_FROM {
            let Some(key) = map.next_key::<String>()? else {
                return Ok(Value::Object(object));
            };
            let value = map.next_value_seed(Whole)?;
            object.insert(key, value);
        }
        let mut members: Vec<(String, Value)> = object.into_iter().collect();
        while let Some(key) = map.next_key::<String>()? {
            members.push((key, map.next_value_seed(Whole)?));
        }
        Ok(Value::Object(members.into_iter().collect()))
    }
}

/// A member's text decoded whole, as [`Whole`] decodes it in place.
pub(super) fn decode_whole(text: &RawValue) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text.get());
    let value = Whole.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}
