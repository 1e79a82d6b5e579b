from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Document(_message.Message):
    __slots__ = ("swagger", "info", "paths", "definitions", "parameters", "security", "security_definitions")
    SWAGGER_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    DEFINITIONS_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    SECURITY_FIELD_NUMBER: _ClassVar[int]
    SECURITY_DEFINITIONS_FIELD_NUMBER: _ClassVar[int]
    swagger: str
    info: Info
    paths: Paths
    definitions: Definitions
    parameters: ParameterDefinitions
    security: _containers.RepeatedCompositeFieldContainer[SecurityRequirement]
    security_definitions: SecurityDefinitions
    def __init__(self, swagger: _Optional[str] = ..., info: _Optional[_Union[Info, _Mapping]] = ..., paths: _Optional[_Union[Paths, _Mapping]] = ..., definitions: _Optional[_Union[Definitions, _Mapping]] = ..., parameters: _Optional[_Union[ParameterDefinitions, _Mapping]] = ..., security: _Optional[_Iterable[_Union[SecurityRequirement, _Mapping]]] = ..., security_definitions: _Optional[_Union[SecurityDefinitions, _Mapping]] = ...) -> None: ...

class Info(_message.Message):
    __slots__ = ("title", "version")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    title: str
    version: str
    def __init__(self, title: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class Any(_message.Message):
    __slots__ = ("yaml",)
    YAML_FIELD_NUMBER: _ClassVar[int]
    yaml: str
    def __init__(self, yaml: _Optional[str] = ...) -> None: ...

class NamedAny(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: Any
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[Any, _Mapping]] = ...) -> None: ...

class Paths(_message.Message):
    __slots__ = ("vendor_extension", "path")
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    path: _containers.RepeatedCompositeFieldContainer[NamedPathItem]
    def __init__(self, vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ..., path: _Optional[_Iterable[_Union[NamedPathItem, _Mapping]]] = ...) -> None: ...

class NamedPathItem(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: PathItem
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[PathItem, _Mapping]] = ...) -> None: ...

class PathItem(_message.Message):
    __slots__ = ("_ref", "get", "put", "post", "delete", "options", "head", "patch", "parameters", "vendor_extension")
    _REF_FIELD_NUMBER: _ClassVar[int]
    GET_FIELD_NUMBER: _ClassVar[int]
    PUT_FIELD_NUMBER: _ClassVar[int]
    POST_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    HEAD_FIELD_NUMBER: _ClassVar[int]
    PATCH_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    _ref: str
    get: Operation
    put: Operation
    post: Operation
    delete: Operation
    options: Operation
    head: Operation
    patch: Operation
    parameters: _containers.RepeatedCompositeFieldContainer[ParametersItem]
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, _ref: _Optional[str] = ..., get: _Optional[_Union[Operation, _Mapping]] = ..., put: _Optional[_Union[Operation, _Mapping]] = ..., post: _Optional[_Union[Operation, _Mapping]] = ..., delete: _Optional[_Union[Operation, _Mapping]] = ..., options: _Optional[_Union[Operation, _Mapping]] = ..., head: _Optional[_Union[Operation, _Mapping]] = ..., patch: _Optional[_Union[Operation, _Mapping]] = ..., parameters: _Optional[_Iterable[_Union[ParametersItem, _Mapping]]] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ...) -> None: ...

class Operation(_message.Message):
    __slots__ = ("tags", "summary", "description", "operation_id", "produces", "consumes", "parameters", "responses", "schemes", "deprecated", "vendor_extension")
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    OPERATION_ID_FIELD_NUMBER: _ClassVar[int]
    PRODUCES_FIELD_NUMBER: _ClassVar[int]
    CONSUMES_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    SCHEMES_FIELD_NUMBER: _ClassVar[int]
    DEPRECATED_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    tags: _containers.RepeatedScalarFieldContainer[str]
    summary: str
    description: str
    operation_id: str
    produces: _containers.RepeatedScalarFieldContainer[str]
    consumes: _containers.RepeatedScalarFieldContainer[str]
    parameters: _containers.RepeatedCompositeFieldContainer[ParametersItem]
    responses: Responses
    schemes: _containers.RepeatedScalarFieldContainer[str]
    deprecated: bool
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, tags: _Optional[_Iterable[str]] = ..., summary: _Optional[str] = ..., description: _Optional[str] = ..., operation_id: _Optional[str] = ..., produces: _Optional[_Iterable[str]] = ..., consumes: _Optional[_Iterable[str]] = ..., parameters: _Optional[_Iterable[_Union[ParametersItem, _Mapping]]] = ..., responses: _Optional[_Union[Responses, _Mapping]] = ..., schemes: _Optional[_Iterable[str]] = ..., deprecated: _Optional[bool] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ...) -> None: ...

class ParametersItem(_message.Message):
    __slots__ = ("parameter", "json_reference")
    PARAMETER_FIELD_NUMBER: _ClassVar[int]
    JSON_REFERENCE_FIELD_NUMBER: _ClassVar[int]
    parameter: Parameter
    json_reference: JsonReference
    def __init__(self, parameter: _Optional[_Union[Parameter, _Mapping]] = ..., json_reference: _Optional[_Union[JsonReference, _Mapping]] = ...) -> None: ...

class JsonReference(_message.Message):
    __slots__ = ("_ref", "description")
    _REF_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    _ref: str
    description: str
    def __init__(self, _ref: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class Parameter(_message.Message):
    __slots__ = ("body_parameter", "non_body_parameter")
    BODY_PARAMETER_FIELD_NUMBER: _ClassVar[int]
    NON_BODY_PARAMETER_FIELD_NUMBER: _ClassVar[int]
    body_parameter: BodyParameter
    non_body_parameter: NonBodyParameter
    def __init__(self, body_parameter: _Optional[_Union[BodyParameter, _Mapping]] = ..., non_body_parameter: _Optional[_Union[NonBodyParameter, _Mapping]] = ...) -> None: ...

class BodyParameter(_message.Message):
    __slots__ = ("description", "name", "required", "schema", "vendor_extension")
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IN_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    description: str
    name: str
    required: bool
    schema: Schema
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, description: _Optional[str] = ..., name: _Optional[str] = ..., required: _Optional[bool] = ..., schema: _Optional[_Union[Schema, _Mapping]] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ..., **kwargs) -> None: ...

class NonBodyParameter(_message.Message):
    __slots__ = ("query_parameter_sub_schema", "path_parameter_sub_schema")
    QUERY_PARAMETER_SUB_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PATH_PARAMETER_SUB_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    query_parameter_sub_schema: QueryParameterSubSchema
    path_parameter_sub_schema: PathParameterSubSchema
    def __init__(self, query_parameter_sub_schema: _Optional[_Union[QueryParameterSubSchema, _Mapping]] = ..., path_parameter_sub_schema: _Optional[_Union[PathParameterSubSchema, _Mapping]] = ...) -> None: ...

class QueryParameterSubSchema(_message.Message):
    __slots__ = ("required", "description", "name", "type", "format", "unique_items", "vendor_extension")
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    IN_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_ITEMS_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    required: bool
    description: str
    name: str
    type: str
    format: str
    unique_items: bool
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, required: _Optional[bool] = ..., description: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[str] = ..., format: _Optional[str] = ..., unique_items: _Optional[bool] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ..., **kwargs) -> None: ...

class PathParameterSubSchema(_message.Message):
    __slots__ = ("required", "description", "name", "type", "format", "unique_items", "vendor_extension")
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    IN_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_ITEMS_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    required: bool
    description: str
    name: str
    type: str
    format: str
    unique_items: bool
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, required: _Optional[bool] = ..., description: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[str] = ..., format: _Optional[str] = ..., unique_items: _Optional[bool] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ..., **kwargs) -> None: ...

class Responses(_message.Message):
    __slots__ = ("response_code", "vendor_extension")
    RESPONSE_CODE_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    response_code: _containers.RepeatedCompositeFieldContainer[NamedResponseValue]
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, response_code: _Optional[_Iterable[_Union[NamedResponseValue, _Mapping]]] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ...) -> None: ...

class NamedResponseValue(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: ResponseValue
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[ResponseValue, _Mapping]] = ...) -> None: ...

class ResponseValue(_message.Message):
    __slots__ = ("response", "json_reference")
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    JSON_REFERENCE_FIELD_NUMBER: _ClassVar[int]
    response: Response
    json_reference: JsonReference
    def __init__(self, response: _Optional[_Union[Response, _Mapping]] = ..., json_reference: _Optional[_Union[JsonReference, _Mapping]] = ...) -> None: ...

class Response(_message.Message):
    __slots__ = ("description", "schema", "vendor_extension")
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    description: str
    schema: SchemaItem
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, description: _Optional[str] = ..., schema: _Optional[_Union[SchemaItem, _Mapping]] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ...) -> None: ...

class SchemaItem(_message.Message):
    __slots__ = ("schema",)
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    schema: Schema
    def __init__(self, schema: _Optional[_Union[Schema, _Mapping]] = ...) -> None: ...

class Definitions(_message.Message):
    __slots__ = ("additional_properties",)
    ADDITIONAL_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    additional_properties: _containers.RepeatedCompositeFieldContainer[NamedSchema]
    def __init__(self, additional_properties: _Optional[_Iterable[_Union[NamedSchema, _Mapping]]] = ...) -> None: ...

class NamedSchema(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: Schema
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[Schema, _Mapping]] = ...) -> None: ...

class Schema(_message.Message):
    __slots__ = ("_ref", "format", "title", "description", "default", "maximum", "minimum", "max_length", "min_length", "pattern", "max_items", "min_items", "unique_items", "required", "enum", "additional_properties", "type", "items", "all_of", "properties", "read_only", "example", "vendor_extension")
    _REF_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MIN_LENGTH_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    MAX_ITEMS_FIELD_NUMBER: _ClassVar[int]
    MIN_ITEMS_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_ITEMS_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    ENUM_FIELD_NUMBER: _ClassVar[int]
    ADDITIONAL_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    ALL_OF_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    _ref: str
    format: str
    title: str
    description: str
    default: Any
    maximum: float
    minimum: float
    max_length: int
    min_length: int
    pattern: str
    max_items: int
    min_items: int
    unique_items: bool
    required: _containers.RepeatedScalarFieldContainer[str]
    enum: _containers.RepeatedCompositeFieldContainer[Any]
    additional_properties: AdditionalPropertiesItem
    type: TypeItem
    items: ItemsItem
    all_of: _containers.RepeatedCompositeFieldContainer[Schema]
    properties: Properties
    read_only: bool
    example: Any
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, _ref: _Optional[str] = ..., format: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., default: _Optional[_Union[Any, _Mapping]] = ..., maximum: _Optional[float] = ..., minimum: _Optional[float] = ..., max_length: _Optional[int] = ..., min_length: _Optional[int] = ..., pattern: _Optional[str] = ..., max_items: _Optional[int] = ..., min_items: _Optional[int] = ..., unique_items: _Optional[bool] = ..., required: _Optional[_Iterable[str]] = ..., enum: _Optional[_Iterable[_Union[Any, _Mapping]]] = ..., additional_properties: _Optional[_Union[AdditionalPropertiesItem, _Mapping]] = ..., type: _Optional[_Union[TypeItem, _Mapping]] = ..., items: _Optional[_Union[ItemsItem, _Mapping]] = ..., all_of: _Optional[_Iterable[_Union[Schema, _Mapping]]] = ..., properties: _Optional[_Union[Properties, _Mapping]] = ..., read_only: _Optional[bool] = ..., example: _Optional[_Union[Any, _Mapping]] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ...) -> None: ...

class AdditionalPropertiesItem(_message.Message):
    __slots__ = ("schema", "boolean")
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    BOOLEAN_FIELD_NUMBER: _ClassVar[int]
    schema: Schema
    boolean: bool
    def __init__(self, schema: _Optional[_Union[Schema, _Mapping]] = ..., boolean: _Optional[bool] = ...) -> None: ...

class TypeItem(_message.Message):
    __slots__ = ("value",)
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, value: _Optional[_Iterable[str]] = ...) -> None: ...

class ItemsItem(_message.Message):
    __slots__ = ("schema",)
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    schema: _containers.RepeatedCompositeFieldContainer[Schema]
    def __init__(self, schema: _Optional[_Iterable[_Union[Schema, _Mapping]]] = ...) -> None: ...

class Properties(_message.Message):
    __slots__ = ("additional_properties",)
    ADDITIONAL_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    additional_properties: _containers.RepeatedCompositeFieldContainer[NamedSchema]
    def __init__(self, additional_properties: _Optional[_Iterable[_Union[NamedSchema, _Mapping]]] = ...) -> None: ...

class ParameterDefinitions(_message.Message):
    __slots__ = ("additional_properties",)
    ADDITIONAL_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    additional_properties: _containers.RepeatedCompositeFieldContainer[NamedParameter]
    def __init__(self, additional_properties: _Optional[_Iterable[_Union[NamedParameter, _Mapping]]] = ...) -> None: ...

class NamedParameter(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: Parameter
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[Parameter, _Mapping]] = ...) -> None: ...

class SecurityRequirement(_message.Message):
    __slots__ = ("additional_properties",)
    ADDITIONAL_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    additional_properties: _containers.RepeatedCompositeFieldContainer[NamedStringArray]
    def __init__(self, additional_properties: _Optional[_Iterable[_Union[NamedStringArray, _Mapping]]] = ...) -> None: ...

class NamedStringArray(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: StringArray
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[StringArray, _Mapping]] = ...) -> None: ...

class StringArray(_message.Message):
    __slots__ = ("value",)
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, value: _Optional[_Iterable[str]] = ...) -> None: ...

class SecurityDefinitions(_message.Message):
    __slots__ = ("additional_properties",)
    ADDITIONAL_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    additional_properties: _containers.RepeatedCompositeFieldContainer[NamedSecurityDefinitionsItem]
    def __init__(self, additional_properties: _Optional[_Iterable[_Union[NamedSecurityDefinitionsItem, _Mapping]]] = ...) -> None: ...

class NamedSecurityDefinitionsItem(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: SecurityDefinitionsItem
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[SecurityDefinitionsItem, _Mapping]] = ...) -> None: ...

class SecurityDefinitionsItem(_message.Message):
    __slots__ = ("api_key_security",)
    API_KEY_SECURITY_FIELD_NUMBER: _ClassVar[int]
    api_key_security: ApiKeySecurity
    def __init__(self, api_key_security: _Optional[_Union[ApiKeySecurity, _Mapping]] = ...) -> None: ...

class ApiKeySecurity(_message.Message):
    __slots__ = ("type", "name", "description", "vendor_extension")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IN_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VENDOR_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    type: str
    name: str
    description: str
    vendor_extension: _containers.RepeatedCompositeFieldContainer[NamedAny]
    def __init__(self, type: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., vendor_extension: _Optional[_Iterable[_Union[NamedAny, _Mapping]]] = ..., **kwargs) -> None: ...
