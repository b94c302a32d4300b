"""Message classes built at import from a .proto file's descriptor, for every protobuf runtime.

Why not protoc's ``*_pb2.py``: since protobuf 5.26 those modules check at import that the
runtime is not older than the protoc that wrote them, nor more than one major release newer.
A user who installs ovmsx and then a client that pins protobuf lower (tritonclient, kserve)
would get a server that dies at start. The modules protos/generate.py writes hold only the
serialized ``FileDescriptorProto`` and build their classes here, with protobuf's public
descriptor-pool API (``DescriptorPool.Add``, ``message_factory.GetMessageClassesForFiles``),
which carries no such check.

All of ovmsx's files share ``POOL``, a pool of its own rather than protobuf's default one:
tritonclient and kserve register the same full names (``inference.ModelInferRequest``, ...)
in the default pool, and a second registration there fails with "duplicate symbol".
"""

from __future__ import annotations

from types import ModuleType

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FileDescriptor

POOL = descriptor_pool.DescriptorPool()


def add_file(
    module: str, serialized: bytes, dependencies: tuple[ModuleType, ...] = ()
) -> tuple[FileDescriptor, dict[str, type]]:
    """Adds a file to ``POOL``; returns its descriptor and its top-level message classes by
    name (nested types are attributes of their classes, as in protoc's modules). Every class
    gets ``module`` as its ``__module__``, as protoc's classes name theirs.

    ``dependencies`` are the modules of the files it imports, protobuf's own well-known types
    (``any_pb2``) included: each is added to the pool first, once.
    """
    for dependency in dependencies:
        _add_once(dependency.DESCRIPTOR.serialized_pb)
    file = _add_once(serialized)
    classes = message_factory.GetMessageClassesForFiles([file.name], POOL)
    pending = [cls.DESCRIPTOR for cls in classes.values()]
    while pending:
        descriptor = pending.pop()
        message_factory.GetMessageClass(descriptor).__module__ = module
        pending.extend(descriptor.nested_types)
    return file, {full_name.rpartition(".")[2]: cls for full_name, cls in classes.items()}


def _add_once(serialized: bytes) -> FileDescriptor:
    proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
    try:
        return POOL.FindFileByName(proto.name)
    except KeyError:
        POOL.Add(proto)
        return POOL.FindFileByName(proto.name)
