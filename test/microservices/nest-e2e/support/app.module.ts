import { Injectable, Module } from '@nestjs/common';
import { type ClientOptions, ClientsModule, type ClientsModuleOptionsFactory } from '@nestjs/microservices';
import { AppController } from './app.controller';
import { E2E_CLIENT } from './e2e-client';

/**
 * Mirrors nestjs/nest integration/microservices/src/app.module.ts: the controller's two injected
 * clients come from `ClientsModule.registerAsync`, one by `useFactory`, one by `useClass`, both
 * reading their options from a config service (here this transport's, not `Transport.TCP`).
 */
@Injectable()
class ConfigService {
  get(): ClientOptions {
    return E2E_CLIENT;
  }
}

@Module({ providers: [ConfigService], exports: [ConfigService] })
class ConfigModule {}

@Injectable()
class ClientOptionService implements ClientsModuleOptionsFactory {
  constructor(private readonly configService: ConfigService) {}

  createClientOptions(): ClientOptions {
    return this.configService.get();
  }
}

@Module({
  imports: [
    ClientsModule.registerAsync([
      {
        imports: [ConfigModule],
        name: 'USE_FACTORY_CLIENT',
        useFactory: (configService: ConfigService) => configService.get(),
        inject: [ConfigService],
      },
      {
        imports: [ConfigModule],
        name: 'USE_CLASS_CLIENT',
        useClass: ClientOptionService,
        inject: [ConfigService],
      },
    ]),
  ],
  controllers: [AppController],
})
export class AppModule {}
