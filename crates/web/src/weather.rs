//! `get_weather`: a place in any language → Open-Meteo's geocoding → its forecast (now, the next
//! 24 hours, the next days). No key. Several places of the name and nothing to tell them apart →
//! the candidates, for the model to ask the person which one.

use crate::WebTools;
use crate::settings::Units;
use crate::tools::{fetch_error, origin_reach};
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetWeatherInput {
    /// A city or place in any language, optionally with its region or country to tell it apart:
    /// `Berlin`, `北京`, `Springfield, Illinois`, `Paris, FR`.
    #[schemars(length(min = 1, max = 200))]
    pub place: String,
    /// Days of forecast (1–16; 3 when unset).
    #[serde(default)]
    #[schemars(range(min = 1, max = 16))]
    pub days: Option<u8>,
    /// `metric` or `imperial` (the person's setting, else their locale, when unset).
    pub units: Option<Units>,
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Place {
    pub name: String,
    pub region: Option<String>,
    pub country: Option<String>,
    pub country_code: Option<String>,
    pub latitude: f64,
    pub longitude: f64,
    pub timezone: Option<String>,
    pub population: Option<u64>,
}

impl Place {
    /// `Springfield, Illinois, United States`.
    pub fn label(&self) -> String {
        [
            Some(&self.name),
            self.region.as_ref(),
            self.country.as_ref(),
        ]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct UnitNames {
    pub temperature: String,
    pub wind: String,
    pub precipitation: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Current {
    pub time: String,
    pub temperature: f64,
    pub feels_like: Option<f64>,
    pub humidity: Option<f64>,
    pub precipitation: Option<f64>,
    pub wind_speed: Option<f64>,
    /// WMO weather code.
    pub code: u8,
    pub condition: String,
    pub is_day: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Hour {
    pub time: String,
    pub temperature: f64,
    pub precipitation_probability: Option<f64>,
    pub code: u8,
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Day {
    pub date: String,
    pub max: f64,
    pub min: f64,
    pub precipitation_probability: Option<f64>,
    pub code: u8,
    pub condition: String,
    pub sunrise: Option<String>,
    pub sunset: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Forecast {
    pub place: Place,
    pub units: UnitNames,
    pub current: Current,
    pub hourly: Vec<Hour>,
    pub daily: Vec<Day>,
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Weather {
    Forecast(Box<Forecast>),
    /// Several places have this name: ask the person which one.
    Ambiguous {
        query: String,
        candidates: Vec<Place>,
    },
}

pub struct WeatherPlan {
    geocoding: String,
    forecast: String,
    geocoding_reach: crate::Reach,
    forecast_reach: crate::Reach,
    units: Units,
}

/// The geocoding search for a place's name, in Chinese when the name is written in Han.
fn geocoding_url(base: &str, name: &str) -> Result<url::Url, ToolError> {
    let language = if name.chars().any(is_han) { "zh" } else { "en" };
    url::Url::parse_with_params(
        &format!("{}/v1/search", base.trim_end_matches('/')),
        [
            ("name", name),
            ("count", "10"),
            ("language", language),
            ("format", "json"),
        ],
    )
    .map_err(|e| ToolError::invalid(format!("{e} — fix the geocoding address in Settings → Web")))
}

/// The forecast request for a place: now, the next 24 hours and `days` days, in the plan's
/// units.
fn forecast_url(plan: &WeatherPlan, place: &Place, days: u8) -> Result<url::Url, ToolError> {
    let imperial = match plan.units {
        Units::Imperial => true,
        Units::Metric => false,
        Units::Auto => locale_is_us(),
    };
    let days = days.to_string();
    let (latitude, longitude) = (place.latitude.to_string(), place.longitude.to_string());
    let mut query = vec![
        ("latitude", latitude.as_str()),
        ("longitude", longitude.as_str()),
        (
            "current",
            "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,wind_speed_10m,is_day",
        ),
        (
            "hourly",
            "temperature_2m,precipitation_probability,weather_code",
        ),
        (
            "daily",
            "weather_code,temperature_2m_max,temperature_2m_min,precipitation_probability_max,sunrise,sunset",
        ),
        ("timezone", "auto"),
        ("forecast_days", days.as_str()),
        ("forecast_hours", "24"),
    ];
    if imperial {
        query.extend([
            ("temperature_unit", "fahrenheit"),
            ("wind_speed_unit", "mph"),
            ("precipitation_unit", "inch"),
        ]);
    }
    url::Url::parse_with_params(
        &format!("{}/v1/forecast", plan.forecast.trim_end_matches('/')),
        query,
    )
    .map_err(|e| ToolError::invalid(format!("{e} — fix the forecast address in Settings → Web")))
}

impl WebTools {
    /// An Open-Meteo answer as JSON; a refusal or a move elsewhere is an error.
    async fn open_meteo_json(&self, url: &str, reach: crate::Reach) -> Result<Value, ToolError> {
        let fetched = self
            .shared
            .client
            .fetch(url, reach)
            .await
            .map_err(fetch_error)?;
        if let Some(elsewhere) = fetched.redirect_elsewhere {
            return Err(ToolError::failed(format!(
                "{url} moved to {elsewhere} — not followed: set that address in Settings → Web"
            )));
        }
        let body: Value = serde_json::from_slice(&fetched.body)
            .map_err(|e| ToolError::failed(format!("{url}: not an Open-Meteo answer ({e})")))?;
        if fetched.status >= 400 {
            // Open-Meteo explains a refused request in `reason`.
            let reason = body["reason"].as_str().unwrap_or("no reason given");
            return Err(ToolError::failed(format!(
                "Open-Meteo answered HTTP {}: {}",
                fetched.status,
                crate::tools::untrusted_line(reason)
            )));
        }
        Ok(body)
    }
}

fn is_han(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
}

/// `Springfield, Illinois` → (`Springfield`, [`illinois`]); Chinese commas too.
fn split_place(raw: &str) -> (String, Vec<String>) {
    let mut parts = raw
        .split([',', '，', '、'])
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let name = parts.next().unwrap_or_default().to_string();
    (name, parts.map(str::to_lowercase).collect())
}

fn place(v: &Value) -> Option<Place> {
    let text = |k: &str| v[k].as_str().map(str::to_string);
    Some(Place {
        name: text("name")?,
        region: text("admin1"),
        country: text("country"),
        country_code: text("country_code"),
        latitude: v["latitude"].as_f64()?,
        longitude: v["longitude"].as_f64()?,
        timezone: text("timezone"),
        population: v["population"].as_u64(),
    })
}

enum Choice {
    None,
    One(Place),
    Several(Vec<Place>),
}

/// The place meant: hints (region, country, its code) narrow the list; among places of exactly
/// the name, one clearly larger than the rest (5× the next) is the one meant (Paris is Paris,
/// France); otherwise the person is asked.
fn choose(name: &str, hints: &[String], places: Vec<Place>) -> Choice {
    let fits = |p: &Place| {
        hints.iter().all(|hint| {
            [&p.region, &p.country, &p.country_code]
                .into_iter()
                .flatten()
                .any(|field| field.to_lowercase().contains(hint.as_str()))
        })
    };
    let mut fitting: Vec<Place> = places.into_iter().filter(fits).collect();
    let same_name: Vec<&Place> = fitting
        .iter()
        .filter(|p| p.name.to_lowercase() == name.to_lowercase())
        .collect();
    if same_name.len() >= 2 {
        let mut sizes: Vec<u64> = same_name
            .iter()
            .map(|p| p.population.unwrap_or(0))
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        if sizes[0] < sizes[1].saturating_mul(5) || sizes[0] == 0 {
            fitting.retain(|p| p.name.to_lowercase() == name.to_lowercase());
            fitting.truncate(6);
            return Choice::Several(fitting);
        }
        let largest = sizes[0];
        fitting.retain(|p| {
            p.name.to_lowercase() == name.to_lowercase() && p.population.unwrap_or(0) == largest
        });
    }
    match fitting.into_iter().next() {
        None => Choice::None,
        Some(p) => Choice::One(p),
    }
}

/// The person's locale measures in US units (`en_US`, from `LC_ALL`, `LC_MEASUREMENT` or `LANG`).
fn locale_is_us() -> bool {
    ["LC_ALL", "LC_MEASUREMENT", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| v.contains("_US") || v.contains("-US"))
}

fn read_forecast(place: Place, f: &Value) -> Result<Weather, ToolError> {
    let missing = |what: &str| ToolError::failed(format!("Open-Meteo's answer has no {what}"));
    let c = &f["current"];
    let unit = |k: &str, fallback: &str| {
        f["current_units"][k]
            .as_str()
            .unwrap_or(fallback)
            .to_string()
    };
    let code = |v: &Value| v.as_u64().unwrap_or(0).min(255) as u8;
    let current = Current {
        time: c["time"]
            .as_str()
            .ok_or_else(|| missing("current time"))?
            .into(),
        temperature: c["temperature_2m"]
            .as_f64()
            .ok_or_else(|| missing("current temperature"))?,
        feels_like: c["apparent_temperature"].as_f64(),
        humidity: c["relative_humidity_2m"].as_f64(),
        precipitation: c["precipitation"].as_f64(),
        wind_speed: c["wind_speed_10m"].as_f64(),
        code: code(&c["weather_code"]),
        condition: condition(code(&c["weather_code"])).into(),
        is_day: c["is_day"].as_u64() != Some(0),
    };
    let column = |section: &str, key: &str, i: usize| f[section][key].get(i).cloned();
    let times = |section: &str| f[section]["time"].as_array().cloned().unwrap_or_default();
    let hourly = times("hourly")
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            Some(Hour {
                time: t.as_str()?.into(),
                temperature: column("hourly", "temperature_2m", i)?.as_f64()?,
                precipitation_probability: column("hourly", "precipitation_probability", i)
                    .and_then(|v| v.as_f64()),
                code: code(&column("hourly", "weather_code", i).unwrap_or_default()),
            })
        })
        .collect();
    let daily = times("daily")
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let code = code(&column("daily", "weather_code", i).unwrap_or_default());
            let text = |k: &str| column("daily", k, i).and_then(|v| v.as_str().map(String::from));
            Some(Day {
                date: t.as_str()?.into(),
                max: column("daily", "temperature_2m_max", i)?.as_f64()?,
                min: column("daily", "temperature_2m_min", i)?.as_f64()?,
                precipitation_probability: column("daily", "precipitation_probability_max", i)
                    .and_then(|v| v.as_f64()),
                code,
                condition: condition(code).into(),
                sunrise: text("sunrise"),
                sunset: text("sunset"),
            })
        })
        .collect();
    let place = Place {
        timezone: f["timezone"].as_str().map(String::from).or(place.timezone),
        ..place
    };
    Ok(Weather::Forecast(Box::new(Forecast {
        place,
        units: UnitNames {
            temperature: unit("temperature_2m", "°C"),
            wind: unit("wind_speed_10m", "km/h"),
            precipitation: unit("precipitation", "mm"),
        },
        current,
        hourly,
        daily,
    })))
}

/// WMO weather interpretation codes, as Open-Meteo documents them.
pub fn condition(code: u8) -> &'static str {
    match code {
        0 => "clear sky",
        1 => "mainly clear",
        2 => "partly cloudy",
        3 => "overcast",
        45 | 48 => "fog",
        51 | 53 | 55 => "drizzle",
        56 | 57 => "freezing drizzle",
        61 => "light rain",
        63 => "rain",
        65 => "heavy rain",
        66 | 67 => "freezing rain",
        71 => "light snow",
        73 => "snow",
        75 => "heavy snow",
        77 => "snow grains",
        80..=82 => "rain showers",
        85 | 86 => "snow showers",
        95 => "thunderstorm",
        96 | 99 => "thunderstorm with hail",
        _ => "unknown",
    }
}

fn get_weather_text(out: &Weather) -> String {
    match out {
        Weather::Ambiguous { query, candidates } => {
            let mut text = format!(
                "Several places are called {query:?}. Ask the person which one they mean, then call get_weather again with it:\n"
            );
            for (i, p) in candidates.iter().enumerate() {
                text.push_str(&format!("{}. {}\n", i + 1, p.label()));
            }
            text
        }
        Weather::Forecast(forecast) => forecast_text(forecast),
    }
}

/// The place, the weather now, every third of the next hours, then one line a day.
fn forecast_text(forecast: &Forecast) -> String {
    let Forecast {
        place,
        units,
        current,
        hourly,
        daily,
    } = forecast;
    let t = &units.temperature;
    let mut text = format!(
        "{} ({:.2}, {:.2}), {}:\nNow: {}, {:.0}{t}",
        place.label(),
        place.latitude,
        place.longitude,
        current.time,
        current.condition,
        current.temperature
    );
    if let Some(f) = current.feels_like {
        text.push_str(&format!(" (feels {f:.0}{t})"));
    }
    if let Some(h) = current.humidity {
        text.push_str(&format!(", humidity {h:.0}%"));
    }
    if let Some(w) = current.wind_speed {
        text.push_str(&format!(", wind {w:.0} {}", units.wind));
    }
    text.push('\n');
    if !hourly.is_empty() {
        text.push_str("Next hours: ");
        let hours: Vec<String> = hourly
            .iter()
            .step_by(3)
            .map(|h| {
                format!(
                    "{} {:.0}{t}{}",
                    h.time.get(11..16).unwrap_or(&h.time),
                    h.temperature,
                    h.precipitation_probability
                        .map(|p| format!(" {p:.0}% rain"))
                        .unwrap_or_default()
                )
            })
            .collect();
        text.push_str(&hours.join(", "));
        text.push('\n');
    }
    for d in daily {
        text.push_str(&format!(
            "{}: {}, {:.0}–{:.0}{t}{}\n",
            d.date,
            d.condition,
            d.min,
            d.max,
            d.precipitation_probability
                .map(|p| format!(", rain {p:.0}%"))
                .unwrap_or_default()
        ));
    }
    text.push_str("Weather data by Open-Meteo.com\n");
    text
}

#[tools(list = weather_tools)]
impl WebTools {
    #[tool(name = "get_weather", title = "Weather", category = "web", aliases = ["weather"],
           effects = [NetFetch], read_only, idempotent, open_world, timeout = Duration::from_secs(30),
           plan = Self::plan_get_weather, text = get_weather_text, description = "The weather for a place (any language): now, the next 24 hours and the next days, from Open-Meteo. When several places share the name it returns them: ask the person which one, then call again with the region or country.")]
    async fn get_weather(
        &self,
        input: &GetWeatherInput,
        plan: &WeatherPlan,
    ) -> ToolResult<Weather> {
        let (name, hints) = split_place(&input.place);
        let url = geocoding_url(&plan.geocoding, &name)?;
        let found = self
            .open_meteo_json(url.as_str(), plan.geocoding_reach)
            .await?;
        let places: Vec<Place> = found["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(place)
            .collect();
        let place = match choose(&name, &hints, places) {
            Choice::One(place) => place,
            Choice::None => {
                return Err(ToolError::failed(format!(
                    "no place called {:?} found — check the spelling, or add the country",
                    input.place
                )));
            }
            Choice::Several(candidates) => {
                return Ok(Weather::Ambiguous {
                    query: input.place.clone(),
                    candidates,
                });
            }
        };
        let days = input.days.unwrap_or(3).clamp(1, 16);
        let url = forecast_url(plan, &place, days)?;
        let forecast = self
            .open_meteo_json(url.as_str(), plan.forecast_reach)
            .await?;
        read_forecast(place, &forecast)
    }

    fn plan_get_weather(
        &self,
        input: &GetWeatherInput,
        _: &EffectEnv,
    ) -> Result<CallPlan<WeatherPlan>, ToolError> {
        if input.place.trim().is_empty() {
            return Err(ToolError::invalid("name a place"));
        }
        let weather = self.shared.settings()?.weather;
        let (geocoding_origin, geocoding_reach) = origin_reach(&weather.geocoding_url)?;
        let (forecast_origin, forecast_reach) = origin_reach(&weather.forecast_url)?;
        let mut effects = vec![Effect::NetFetch {
            origin: geocoding_origin.clone(),
        }];
        if forecast_origin != geocoding_origin {
            effects.push(Effect::NetFetch {
                origin: forecast_origin,
            });
        }
        Ok(CallPlan::with(
            effects,
            WeatherPlan {
                geocoding: weather.geocoding_url,
                forecast: weather.forecast_url,
                geocoding_reach,
                forecast_reach,
                units: input.units.unwrap_or(weather.units),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(name: &str, region: &str, country: &str, population: Option<u64>) -> Place {
        Place {
            name: name.into(),
            region: Some(region.into()),
            country: Some(country.into()),
            country_code: None,
            latitude: 0.0,
            longitude: 0.0,
            timezone: None,
            population,
        }
    }

    #[test]
    fn a_clearly_larger_place_is_meant_equals_are_asked_about_hints_narrow() {
        let paris = vec![
            at("Paris", "Île-de-France", "France", Some(2_138_551)),
            at("Paris", "Texas", "United States", Some(24_171)),
        ];
        assert!(
            matches!(choose("Paris", &[], paris), Choice::One(p) if p.country.as_deref() == Some("France"))
        );
        let springfield = || {
            vec![
                at("Springfield", "Missouri", "United States", Some(166_810)),
                at(
                    "Springfield",
                    "Massachusetts",
                    "United States",
                    Some(155_929),
                ),
                at("Springfield", "Illinois", "United States", Some(116_565)),
            ]
        };
        assert!(
            matches!(choose("Springfield", &[], springfield()), Choice::Several(c) if c.len() == 3)
        );
        assert!(matches!(
            choose("Springfield", &["illinois".into()], springfield()),
            Choice::One(p) if p.region.as_deref() == Some("Illinois")
        ));
        assert!(matches!(choose("Nowhere", &[], vec![]), Choice::None));
        assert_eq!(
            split_place("北京，中国"),
            ("北京".to_string(), vec!["中国".to_string()])
        );
    }
}
