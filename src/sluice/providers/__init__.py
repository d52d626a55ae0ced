"""Built-in config providers (they import only :mod:`sluice.api`):

* :class:`FileConfigProvider` — ``org.apache.kafka.common.config.provider.FileConfigProvider``
* :class:`DirectoryConfigProvider` — ``org.apache.kafka.common.config.provider.DirectoryConfigProvider``
* :class:`EnvVarConfigProvider` — ``org.apache.kafka.common.config.provider.EnvVarConfigProvider``
"""

from sluice.providers.directory import DirectoryConfigProvider
from sluice.providers.env_var import EnvVarConfigProvider
from sluice.providers.file import FileConfigProvider

__all__ = ["DirectoryConfigProvider", "EnvVarConfigProvider", "FileConfigProvider"]
